import HaulCore
import Testing

/// The queue as one machine, event by event: what clients see of a task in it, the signals, the attempts started and
/// stopped, the back-off the scheduler waits out, and the order of it all.
@Suite("Transfer queue", .timeLimit(.minutes(2)))
struct TransferQueueTests {
    @Test func aNewTaskStartsAtOnceWhenASlotIsFree() {
        var queue = Queue()
        #expect(queue.add(1) == [.persist(1), .emitDidResume(1), .startAttempt(1, attempt: 1), .runningCountChanged(1)])
        #expect(queue.shown(1) == "running")
        #expect(queue.entry(1)?.queuePosition == 1)
        #expect(queue.entry(1)?.crashLoop.interruptedRuns == 1, "saved with the start, before the attempt")
    }

    /// Last turn's bug: a new task over the limit was shown `running` before `queued`.
    @Test func aNewTaskOverTheLimitIsAnnouncedQueuedNeverRunning() {
        var queue = Queue.with(max: 1, tasks: 1)
        let actions = queue.add(2)
        #expect(actions == [.persist(2), .emitDidResume(2)], "exported as it stands: nothing more to publish")
        #expect(queue.shown(2) == "queued:slot")
        #expect(queue.scheduler.runningTaskCount == 1, "a queued task does not count")
    }

    @Test func aFreedSlotGoesToTheNextTaskWithoutASignal() {
        var queue = Queue.with(max: 1, tasks: 3)
        let actions = queue.attemptEnded(1, .succeeded, now: ms(100))
        #expect(publishedStates(actions) == ["1 completed", "2 running"])
        #expect(signalsSent(actions) == ["complete 1"])
        #expect(startedAttempts(actions) == [2])
        #expect(queue.shown(3) == "queued:slot")
        #expect(!actions.contains(.runningCountChanged(1)), "one ended, one started: the count did not change")
    }

    @Test func aQueuedTaskSuspendsAndCancelsWithNothingToStop() throws {
        var queue = Queue.with(max: 1, tasks: 3)
        #expect(try queue.suspend(2, now: ms(10)) == [.persist(2), .publishState(2, .init(state: .suspended)),
            .emitDidSuspend(2)])
        let resumed = try queue.resume(2, now: ms(20))
        #expect(publishedStates(resumed) == ["2 queued:slot"])
        #expect(signalsSent(resumed) == ["resume 2"])
        #expect(queue.entry(2)?.queuePosition == 4, "a resumed task joins the end of the queue")
        let cancelled = try queue.cancel(3, now: ms(30))
        #expect(cancelled == [
            .removePartialFile(3), .persist(3), .publishState(3, .init(state: .completed)),
            .emitDidComplete(3, .failure(.cancelled)),
        ])
        #expect(startedAttempts(queue.attemptEnded(1, .succeeded, now: ms(40))) == [2])
    }

    @Test func aSuspendedTransferKeepsItsSlotUntilItsAttemptStops() throws {
        var queue = Queue.with(max: 1, tasks: 2)
        let suspended = try queue.suspend(1, now: ms(10))
        #expect(suspended == [
            .stopAttempt(1), .persist(1), .publishState(1, .init(state: .suspended)), .emitDidSuspend(1),
            .runningCountChanged(0),
        ])
        #expect(queue.shown(2) == "queued:slot")
        let stopped = queue.attemptEnded(1, .stopped, now: ms(20))
        #expect(stopped == [
            .persist(1), .persist(2), .publishState(2, .init(state: .running)), .startAttempt(2, attempt: 1),
            .runningCountChanged(1),
        ])
    }

    /// A resume while the stopping attempt has not let go of the partial file waits for it: queued, with no second
    /// writer, and no extra signal.
    @Test func aResumeWhileStoppingWaitsForTheStop() throws {
        var queue = Queue.with(max: 1, tasks: 1)
        _ = try queue.suspend(1, now: ms(10))
        let resumed = try queue.resume(1, now: ms(20))
        #expect(startedAttempts(resumed) == [])
        #expect(signalsSent(resumed) == ["resume 1"])
        #expect(queue.shown(1) == "queued:slot")
        let stopped = queue.attemptEnded(1, .stopped, now: ms(30))
        #expect(startedAttempts(stopped) == [1])
        #expect(signalsSent(stopped) == [])
        #expect(queue.shown(1) == "running")
    }

    /// The back-off has one owner: the lifecycle says how long, the scheduler waits it out with its one timer and
    /// gives the slot when it is over; the slot serves another task meanwhile.
    @Test func theSchedulerWaitsOutTheBackOffAndGivesTheSlotAfter() {
        var queue = Queue(maxRunningTasks: 1)
        queue.add(1, maxRetries: 1)
        queue.add(2)
        let failed = queue.attemptEnded(1, .failed(.network("reset")), now: ms(100))
        #expect(publishedStates(failed) == ["1 queued:retry", "2 running"])
        #expect(startedAttempts(failed) == [2])
        #expect(failed.last == .armTimer(deadline: ms(1100), generation: 1))
        #expect(queue.timerFired(generation: 1, now: ms(1100)) == [.publishState(1, .init(state: .running,
            waitingFor: .slot))], "the back-off is over; the slot is taken")
        let freed = queue.attemptEnded(2, .succeeded, now: ms(1200))
        #expect(freed.contains(.startAttempt(1, attempt: 2)), "the next attempt of the run")
        let last = queue.attemptEnded(1, .failed(.network("reset again")), now: ms(1300))
        #expect(signalsSent(last) == ["complete 1"], "its one retry is spent")
        #expect(queue.entry(1)?.lifecycle.outcome == .failure(.network("reset again")))
    }

    /// A failure while the network is down is the network's: the same attempt waits for it, no retry spent.
    @Test func aFailureWithoutTheNetworkSpendsNoRetry() {
        var queue = Queue()
        queue.add(1, maxRetries: 0)
        _ = queue.networkChanged(to: .offline, metered: false, now: ms(10))
        #expect(queue.shown(1) == "running", "a running transfer goes on")
        let failed = queue.attemptEnded(1, .failed(.network("unreachable")), now: ms(20))
        #expect(publishedStates(failed) == ["1 queued:network"])
        #expect(signalsSent(failed) == [])
        let back = queue.networkChanged(to: .online, metered: false, now: ms(30))
        #expect(back.contains(.startAttempt(1, attempt: 1)))
    }

    /// `Retry` runs a failed task again, from the end of the queue and with attempt 1; a task that succeeded or was
    /// cancelled refuses it.
    @Test func retryRunsAFailedTaskAgainFromTheEndOfTheQueue() throws {
        var queue = Queue(maxRunningTasks: 1)
        queue.add(1, maxRetries: 0)
        queue.add(2)
        _ = queue.attemptEnded(1, .failed(.http(status: 500)), now: ms(10))
        #expect(queue.shown(1) == "completed")
        let retried = try queue.retry(1, now: ms(20))
        #expect(publishedStates(retried) == ["1 queued:slot"])
        #expect(signalsSent(retried) == ["resume 1"])
        #expect(queue.entry(1)?.queuePosition == 3)
        #expect(queue.attemptEnded(2, .succeeded, now: ms(30)).contains(.startAttempt(1, attempt: 1)))
        _ = queue.attemptEnded(1, .succeeded, now: ms(40))
        #expect(throws: TaskCommandError.taskCompleted) { try queue.retry(1, now: ms(50)) }
        _ = queue.add(3)
        _ = try queue.cancel(3, now: ms(60))
        _ = queue.attemptEnded(3, .stopped, now: ms(65))
        #expect(throws: TaskCommandError.taskCompleted) { try queue.retry(3, now: ms(70)) }
    }

    /// Sleep stops attempts before anything else is said, and the slot is not given until they have stopped.
    @Test func stopsComeFirst() {
        var queue = Queue.with(max: 1, tasks: 2)
        let sleeping = queue.prepareForSleep(true, now: ms(10))
        #expect(sleeping.first == .stopAttempt(1))
        #expect(publishedStates(sleeping) == ["1 queued:sleep", "2 queued:sleep"])
        #expect(startedAttempts(queue.attemptEnded(1, .stopped, now: ms(20))) == [], "asleep")
        let awake = queue.prepareForSleep(false, now: ms(30))
        #expect(awake.contains(.startAttempt(1, attempt: 1)), "set back: the same attempt, no retry spent")
    }

    /// After a restart the tasks rejoin in their saved order: a running one continues silently, queued if the
    /// limit says so; the others wait as they were.
    @Test func restoredTasksRejoinInTheirSavedOrder() {
        var queue = Queue(maxRunningTasks: 1)
        let traits = Queue.Traits()
        for (id, state, position) in [
            (5, TransferTaskState.running, 2), (3, .running, 1), (4, .suspended, 3), (6, .completed, 0),
        ] as [(UInt32, TransferTaskState, UInt64)] {
            queue.restore(
                id, state: state, outcome: state == .completed ? .success : nil, crashLoop: CrashLoopGuard(),
                traits: traits, queuePosition: position, maxRetries: 5
            )
        }
        #expect(queue.restoredOrder() == [6, 3, 5, 4])
        var actions: [QueueAction] = []
        for id in queue.restoredOrder() { actions += queue.continueRestored(id, now: ms(0)) }
        #expect(startedAttempts(actions) == [3])
        #expect(signalsSent(actions) == [])
        #expect(publishedStates(actions) == ["5 queued:slot"])
        #expect(queue.entry(5)?.queuePosition == 2, "positions are kept")
        #expect(queue.add(7, suspended: true).contains(.persist(7)))
        #expect(queue.entry(7)?.queuePosition == 4)
    }

    @Test func forgetTakesOnlyACompletedTask() throws {
        var queue = Queue.with(max: 1, tasks: 1)
        let early = queue.forget(1)
        #expect(!early)
        _ = try queue.cancel(1, now: ms(10))
        #expect(queue.attemptEnded(1, .stopped, now: ms(20)).contains(.emitDidComplete(1, .failure(.cancelled))))
        let forgotten = queue.forget(1)
        #expect(forgotten)
        #expect(queue.entry(1) == nil)
        #expect(queue.count == 0)
    }
}
