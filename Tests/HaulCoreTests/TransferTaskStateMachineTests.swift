import HaulCore
import Testing

@Suite("Transfer task lifecycle", .timeLimit(.minutes(2)))
struct TransferTaskStateMachineTests {
    // MARK: - Starting

    @Test func aNewTaskIsSuspendedUntilStarted() {
        let machine = TaskMachine()
        #expect(machine.state == .suspended)
        #expect(machine.outcome == nil)
        #expect(machine.attempt == 0)
        #expect(machine.isPausable && machine.isCancellable)
        #expect(machine.maxRetries == 5)
        #expect(machine.retryPolicy == RetryPolicy())
    }

    @Test func theFirstStartIsAResume() {
        var machine = TaskMachine()
        #expect(machine.start(now: ms(0)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(machine.state == .running)
        #expect(machine.attempt == 1)
        #expect(machine.start(now: ms(10)) == [], "a second start does nothing")
    }

    @Test func aTaskCreatedSuspendedStartsAtItsFirstResume() throws {
        var machine = TaskMachine()
        #expect(try machine.suspend(now: ms(0)) == [], "already suspended: nothing to say")
        #expect(try machine.resume(now: ms(50)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(machine.state == .running)
        #expect(machine.start(now: ms(60)) == [])
    }

    // MARK: - Suspend and resume

    @Test func suspendStopsTheTransferAndSignalsOnce() throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(try machine.suspend(now: ms(200)) == [.stopTransfer] + taskSuspending)
        #expect(machine.state == .suspended)
        #expect(try machine.suspend(now: ms(210)) == [], "a second Suspend sends nothing")
        #expect(machine.transferStopped(now: ms(250)) == [])
        #expect(try machine.suspend(now: ms(260)) == [])
        #expect(machine.state == .suspended)
    }

    @Test func resumeOnARunningTaskDoesNothing() throws {
        for phase in [TaskPhase.transferring, .waitingToRetry, .restarting] {
            var machine = try phase.machine()
            #expect(try machine.resume(now: ms(400)) == [], "\(phase)")
            #expect(machine.state == .running)
        }
    }

    @Test func resumeAfterTheTransferStoppedStartsAFreshRun() throws {
        var machine = try TaskPhase.suspended.machine()
        #expect(try machine.resume(now: ms(300)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(machine.state == .running)
        #expect(machine.attempt == 1)
    }

    @Test func resumeBeforeTheTransferStoppedWaitsForIt() throws {
        var machine = try TaskPhase.suspending.machine()
        #expect(try machine.resume(now: ms(300)) == taskResuming, "no second writer on the partial file")
        #expect(machine.state == .running)
        #expect(try machine.resume(now: ms(310)) == [])
        #expect(machine.transferStopped(now: ms(350)) == [.startTransfer(attempt: 1)])
        #expect(machine.state == .running)
    }

    @Test func suspendWhileRestartingDoesNotStopTwice() throws {
        var machine = try TaskPhase.restarting.machine()
        #expect(try machine.suspend(now: ms(320)) == taskSuspending)
        #expect(machine.transferStopped(now: ms(350)) == [])
        #expect(machine.state == .suspended)
        #expect(try machine.resume(now: ms(400)) == [.startTransfer(attempt: 1)] + taskResuming)
    }

    @Test func theRestartingRunStartsWhenTheOldTransferEndsTransiently() throws {
        var machine = try TaskPhase.restarting.machine()
        #expect(machine.transferFailed(.network("reset"), now: ms(350)) == [.startTransfer(attempt: 1)])
        #expect(machine.state == .running)
    }

    @Test func aPermanentFailureOfTheOldTransferCompletesARestartingTask() throws {
        var machine = try TaskPhase.restarting.machine()
        let failure = TransferFailure.diskFull("/tmp/f")
        #expect(machine.transferFailed(failure, now: ms(350)) == taskCompleting(.failure(failure)))
        #expect(machine.outcome == .failure(failure))
    }

    @Test func successOfTheOldTransferCompletesARestartingTask() throws {
        var machine = try TaskPhase.restarting.machine()
        #expect(machine.transferSucceeded(now: ms(350)) == taskCompleting(.success))
        #expect(machine.outcome == .success)
    }

    @Test func suspendWhileWaitingToRetryEndsTheWaitAndResumeRestartsAtOnce() throws {
        var machine = try TaskPhase.waitingToRetry.machine()
        #expect(try machine.suspend(now: ms(500)) == taskSuspending)
        #expect(machine.retryDue(now: ms(1100)) == [], "the back-off no longer counts")
        #expect(try machine.resume(now: ms(1200)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(machine.attempt == 1, "a Resume starts a fresh retry budget")
    }

    @Test func aTransientFailureWhileSuspendingIsDropped() throws {
        var machine = try TaskPhase.suspending.machine()
        #expect(machine.transferFailed(.network("reset"), now: ms(250)) == [])
        #expect(machine.state == .suspended)
        #expect(try machine.resume(now: ms(300)) == [.startTransfer(attempt: 1)] + taskResuming)
    }

    @Test func aPermanentFailureWhileSuspendingCompletesTheTask() throws {
        var machine = try TaskPhase.suspending.machine()
        let failure = TransferFailure.http(status: 404)
        #expect(machine.transferFailed(failure, now: ms(250)) == taskCompleting(.failure(failure)))
        #expect(machine.state == .completed)
    }

    @Test func successWhileSuspendingCompletesTheTask() throws {
        var machine = try TaskPhase.suspending.machine()
        #expect(machine.transferSucceeded(now: ms(250)) == taskCompleting(.success))
        #expect(machine.state == .completed)
    }

    // MARK: - Cancel

    @Test func cancelWhileTransferringStopsThenCompletes() throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(try machine.cancel(now: ms(200)) == [.stopTransfer, .persist, .publishState(.canceling)])
        #expect(machine.state == .canceling)
        #expect(!machine.isPausable && !machine.isCancellable)
        #expect(try machine.cancel(now: ms(210)) == [], "cancel while canceling: nothing")
        #expect(try machine.suspend(now: ms(220)) == [])
        #expect(try machine.resume(now: ms(230)) == [])
        #expect(machine.state == .canceling)
        #expect(machine.transferStopped(now: ms(250)) == taskCompleting(cancelledOutcome))
        #expect(machine.state == .completed)
        #expect(machine.outcome == cancelledOutcome)
    }

    @Test func cancelWithNothingInFlightCompletesAtOnce() throws {
        for phase in [TaskPhase.new, .suspended] {
            var machine = try phase.machine()
            #expect(try machine.cancel(now: ms(400)) == taskCompleting(cancelledOutcome), "\(phase)")
            #expect(machine.outcome == cancelledOutcome)
        }
    }

    @Test func cancelWhileWaitingToRetryCompletesAtOnce() throws {
        var machine = try TaskPhase.waitingToRetry.machine()
        #expect(try machine.cancel(now: ms(500)) == taskCompleting(cancelledOutcome))
        #expect(machine.retryDue(now: ms(1100)) == [])
        #expect(machine.state == .completed)
    }

    @Test func cancelWhileAStopIsUnderWayWaitsForIt() throws {
        for phase in [TaskPhase.suspending, .restarting] {
            var machine = try phase.machine()
            #expect(try machine.cancel(now: ms(400)) == [.persist, .publishState(.canceling)], "\(phase)")
            #expect(machine.transferStopped(now: ms(450)) == taskCompleting(cancelledOutcome))
        }
    }

    @Test func aFailureWhileCancelingCompletesTheCancel() throws {
        for failure in [TransferFailure.network("reset"), .http(status: 404)] {
            var machine = try TaskPhase.canceling.machine()
            #expect(machine.transferFailed(failure, now: ms(250)) == taskCompleting(cancelledOutcome))
        }
    }

    @Test func successWhileCancelingWins() throws {
        var machine = try TaskPhase.canceling.machine()
        #expect(machine.transferSucceeded(now: ms(250)) == taskCompleting(.success))
        #expect(machine.outcome == .success)
    }

    // MARK: - Completed

    @Test(arguments: [TransferOutcome.success, .failure(.cancelled), .failure(.http(status: 410))])
    func aCompletedTaskRefusesCommandsAndIgnoresEvents(_ outcome: TransferOutcome) throws {
        var machine = TaskMachine(restoring: .completed, outcome: outcome)
        #expect(throws: TaskCommandError.taskCompleted) { try machine.suspend(now: ms(0)) }
        #expect(throws: TaskCommandError.taskCompleted) { try machine.resume(now: ms(0)) }
        #expect(throws: TaskCommandError.taskCompleted) { try machine.cancel(now: ms(0)) }
        #expect(machine.start(now: ms(0)) == [])
        #expect(machine.transferStopped(now: ms(0)) == [])
        #expect(machine.transferSucceeded(now: ms(0)) == [])
        #expect(machine.transferFailed(.network("x"), now: ms(0)) == [])
        #expect(machine.retryDue(now: ms(0)) == [])
        #expect(machine.state == .completed)
        #expect(machine.outcome == outcome)
        #expect(!machine.isPausable && !machine.isCancellable)
    }

    @Test func successCompletesOnceWithoutRemovingAnything() throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(
            machine.transferSucceeded(now: ms(500)) == [
                .persist, .publishState(.completed), .emitDidComplete(.success),
            ]
        )
        #expect(machine.transferSucceeded(now: ms(510)) == [])
        #expect(throws: TaskCommandError.taskCompleted) { try machine.suspend(now: ms(520)) }
    }

    // MARK: - Retries

    @Test func aTransientFailureWaitsThenRetries() throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(
            machine.transferFailed(.network("reset"), now: ms(500)) == [.waitToRetry(until: ms(1500))]
        )
        #expect(machine.state == .running, "a task waiting to retry is still running")
        #expect(machine.isPausable)
        #expect(machine.retryDue(now: ms(1500)) == [.startTransfer(attempt: 2)])
        #expect(machine.attempt == 2)
        #expect(machine.state == .running)
    }

    @Test func delaysGrowAndRetriesRunOutWithTheLastFailure() throws {
        var machine = TaskMachine(maxRetries: 3)
        _ = machine.start(now: ms(0))
        var now = 0
        for (attempt, delay) in [(1, 1000), (2, 2000), (3, 4000)] {
            now += 100
            let armed = machine.transferFailed(.timeout("stalled"), now: ms(now))
            #expect(armed == [.waitToRetry(until: ms(now + delay))])
            now += delay
            #expect(machine.retryDue(now: ms(now)) == [.startTransfer(attempt: attempt + 1)])
        }
        let last = TransferFailure.http(status: 503)
        #expect(machine.transferFailed(last, now: ms(now + 100)) == taskCompleting(.failure(last)))
        #expect(machine.outcome == .failure(last))
        #expect(machine.attempt == 4)
    }

    @Test func noRetriesMeansTheFirstTransientFailureCompletes() throws {
        var machine = TaskMachine(maxRetries: 0)
        _ = machine.start(now: ms(0))
        let failure = TransferFailure.network("refused")
        #expect(machine.transferFailed(failure, now: ms(10)) == taskCompleting(.failure(failure)))
    }

    @Test(arguments: [
        TransferFailure.http(status: 404), .checksumMismatch(expected: "a", actual: "b"), .diskFull("/f"),
        .permissionDenied("/f"), .fileExists("/f"),
    ])
    func aPermanentFailureIsNeverRetried(_ failure: TransferFailure) throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(machine.transferFailed(failure, now: ms(100)) == taskCompleting(.failure(failure)))
        #expect(machine.attempt == 1)
    }

    @Test func retryAfterIsHonoured() throws {
        var machine = try TaskPhase.transferring.machine()
        let failure = TransferFailure.http(status: 503, retryAfter: .seconds(30))
        let armed = machine.transferFailed(failure, now: ms(100))
        #expect(armed == [.waitToRetry(until: ms(30_100))])
    }

    @Test func aCustomPolicyIsUsed() {
        var machine = TaskMachine(retryPolicy: RetryPolicy(initialDelay: .milliseconds(250)))
        _ = machine.start(now: ms(0))
        let armed = machine.transferFailed(.network("x"), now: ms(0))
        #expect(armed == [.waitToRetry(until: ms(250))])
    }

    @Test func aBackOffEndsOnce() throws {
        var machine = try TaskPhase.waitingToRetry.machine()
        #expect(machine.retryDue(now: ms(1100)) == [.startTransfer(attempt: 2)])
        #expect(machine.retryDue(now: ms(1200)) == [], "a back-off reported twice counts once")
    }

    @Test func anUnrequestedStopIsATransientFailure() throws {
        var machine = try TaskPhase.transferring.machine()
        #expect(machine.transferStopped(now: ms(100)) == [.waitToRetry(until: ms(1100))])
        #expect(machine.state == .running)
    }

    @Test func transferReportsWithNothingInFlightAreIgnored() throws {
        for phase in [TaskPhase.new, .waitingToRetry, .suspended] {
            var machine = try phase.machine()
            #expect(machine.transferStopped(now: ms(600)) == [], "\(phase)")
            #expect(machine.transferSucceeded(now: ms(600)) == [], "\(phase)")
            #expect(machine.transferFailed(.http(status: 404), now: ms(600)) == [], "\(phase)")
            #expect(machine.state == phase.state)
        }
    }

    @Test func backOffsOutsideWaitingAreIgnored() throws {
        for phase in TaskPhase.allCases where phase != .waitingToRetry {
            var machine = try phase.machine()
            #expect(machine.retryDue(now: ms(5000)) == [], "\(phase)")
            #expect(machine.state == phase.state)
        }
    }

    // MARK: - Retry

    /// `Retry` runs a task that failed again, with a fresh budget; on an unfinished task it is `Resume`.
    @Test func retryRunsAFailedTaskAgainAndResumesAnUnfinishedOne() throws {
        var failed = TaskMachine(restoring: .completed, outcome: .failure(.http(status: 503)), maxRetries: 2)
        #expect(try failed.retry(now: ms(0)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(failed.state == .running)
        #expect(failed.outcome == nil)
        var suspended = try TaskPhase.suspended.machine()
        #expect(try suspended.retry(now: ms(300)) == [.startTransfer(attempt: 1)] + taskResuming)
        var running = try TaskPhase.transferring.machine()
        #expect(try running.retry(now: ms(300)) == [], "running already")
    }

    @Test(arguments: [TransferOutcome.success, .failure(.cancelled)])
    func retryRefusesATaskThatSucceededOrWasCancelled(_ outcome: TransferOutcome) {
        var machine = TaskMachine(restoring: .completed, outcome: outcome)
        #expect(throws: TaskCommandError.taskCompleted) { try machine.retry(now: ms(0)) }
        #expect(machine.outcome == outcome)
    }

    // MARK: - Restoring

    @Test func aRestoredRunningTaskContinuesSilently() throws {
        var machine = TaskMachine(restoring: .running, outcome: nil, maxRetries: 2)
        #expect(machine.state == .running)
        #expect(machine.maxRetries == 2)
        #expect(try machine.resume(now: ms(0)) == [], "already running for its clients")
        #expect(machine.start(now: ms(0)) == [.startTransfer(attempt: 1)], "no TaskDidResume, nothing to save")
        #expect(machine.state == .running)
        #expect(machine.start(now: ms(10)) == [])
    }

    @Test func aRestoredRunningTaskSuspendedBeforeItStartsHasNothingToStop() throws {
        var machine = TaskMachine(restoring: .running, outcome: nil)
        #expect(try machine.suspend(now: ms(0)) == taskSuspending)
        #expect(machine.start(now: ms(10)) == [])
        #expect(try machine.cancel(now: ms(20)) == taskCompleting(cancelledOutcome))
    }

    @Test func aRestoredRunningTaskCancelledBeforeItStartsCompletesAtOnce() throws {
        var machine = TaskMachine(restoring: .running, outcome: nil)
        #expect(try machine.cancel(now: ms(0)) == taskCompleting(cancelledOutcome))
    }

    @Test func aRestoredSuspendedTaskWaitsForResume() throws {
        var machine = TaskMachine(restoring: .suspended, outcome: nil)
        #expect(machine.state == .suspended)
        #expect(machine.start(now: ms(0)) == [])
        #expect(try machine.resume(now: ms(10)) == [.startTransfer(attempt: 1)] + taskResuming)
    }

    @Test func aRestoredCancelingTaskFinishesItsCancelOnStart() throws {
        var machine = TaskMachine(restoring: .canceling, outcome: nil)
        #expect(machine.state == .canceling)
        #expect(!machine.isCancellable)
        #expect(try machine.cancel(now: ms(0)) == [])
        #expect(try machine.resume(now: ms(0)) == [])
        #expect(try machine.suspend(now: ms(0)) == [])
        #expect(machine.transferStopped(now: ms(0)) == [], "no transfer runs for it")
        #expect(machine.start(now: ms(0)) == taskCompleting(cancelledOutcome))
        #expect(machine.outcome == cancelledOutcome)
    }

    @Test func aRestoredCompletedTaskKeepsItsOutcome() {
        let failure = TransferFailure.checksumMismatch(expected: "aa", actual: "bb")
        let machine = TaskMachine(restoring: .completed, outcome: .failure(failure))
        #expect(machine.outcome == .failure(failure))
        #expect(
            TaskMachine(restoring: .running, outcome: .success).outcome == nil,
            "the outcome of a running task is ignored"
        )
    }

    @Test func aRestoredCompletedTaskWithoutAnOutcomeCompletesAsAFailure() {
        let machine = TaskMachine(restoring: .completed, outcome: nil)
        #expect(machine.state == .completed)
        #expect(machine.outcome?.failure?.isTransient == false)
    }
}
