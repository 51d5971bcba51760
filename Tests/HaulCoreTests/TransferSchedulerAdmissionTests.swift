import HaulCore
import Testing

/// Who gets a slot, and when: `MaxRunningTasks`, FIFO within a priority, foreground before background.
@Suite("Transfer scheduler admission")
struct TransferSchedulerAdmissionTests {
    @Test func aNewTaskStartsWhenASlotIsFree() {
        var scheduler = Scheduler()
        #expect(scheduler.maxRunningTasks == 5)
        #expect(scheduler.add(1) == [.startAttempt(1), .saveQueueOrder])
        #expect(scheduler.task(1)?.attempt == .running)
        #expect(scheduler.waitingFor(1) == nil)
        #expect(scheduler.runningTasks == [1])
    }

    @Test func tasksOverTheLimitWaitForASlot() {
        var scheduler = Scheduler.with(max: 5, tasks: 5)
        #expect(scheduler.add(6) == [.publishWaitingFor(6, .slot), .saveQueueOrder])
        #expect(scheduler.runningTasks == [1, 2, 3, 4, 5])
        #expect(scheduler.attemptsInFlight == 5)
    }

    @Test func aFreedSlotGoesToTheTaskThatWaitedLongest() {
        var scheduler = Scheduler.with(max: 2, tasks: 5)
        #expect(scheduler.completed(2, now: ms(100)) == [.publishWaitingFor(3, nil), .startAttempt(3)])
        #expect(scheduler.completed(1, now: ms(200)) == [.publishWaitingFor(4, nil), .startAttempt(4)])
        #expect(scheduler.runningTasks == [3, 4])
        #expect(scheduler.waitingFor(5) == .slot)
    }

    @Test func foregroundTasksTakeFreeSlotsBeforeBackgroundOnes() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        scheduler.add(1)
        scheduler.add(2, .background)
        scheduler.add(3, .background)
        scheduler.add(4)
        #expect(scheduler.completed(1, now: ms(100)) == [.publishWaitingFor(4, nil), .startAttempt(4)])
        #expect(scheduler.completed(4, now: ms(200)) == [.publishWaitingFor(2, nil), .startAttempt(2)])
        #expect(scheduler.waitingFor(3) == .slot)
    }

    @Test func priorityOrdersTheQueueButNeverPreempts() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        scheduler.add(1, .background)
        #expect(scheduler.add(2) == [.publishWaitingFor(2, .slot), .saveQueueOrder])
        #expect(scheduler.runningTasks == [1])
    }

    @Test func zeroMeansNoLimit() {
        let scheduler = Scheduler.with(max: 0, tasks: 50)
        #expect(scheduler.runningTasks.count == 50)
        #expect(scheduler.reasons.values.allSatisfy { $0 == nil })
    }

    @Test func raisingTheLimitStartsWaitingTasksInOrder() {
        var scheduler = Scheduler.with(max: 1, tasks: 4)
        let actions = scheduler.maxRunningTasksChanged(to: 3, now: ms(100))
        #expect(actions == [.publishWaitingFor(2, nil), .publishWaitingFor(3, nil), .startAttempt(2), .startAttempt(3)])
        #expect(scheduler.maxRunningTasksChanged(to: 0, now: ms(200)) == [.publishWaitingFor(4, nil), .startAttempt(4)])
    }

    /// Lowering the limit lets running transfers finish: their slots are simply not refilled until the count is under
    /// the new limit.
    @Test func loweringTheLimitStopsNothing() {
        var scheduler = Scheduler.with(max: 4, tasks: 6)
        #expect(scheduler.maxRunningTasksChanged(to: 2, now: ms(100)) == [])
        #expect(scheduler.runningTasks == [1, 2, 3, 4])
        #expect(scheduler.completed(1, now: ms(200)) == [])
        #expect(scheduler.completed(2, now: ms(300)) == [])
        #expect(scheduler.completed(3, now: ms(400)) == [.publishWaitingFor(5, nil), .startAttempt(5)])
        #expect(scheduler.runningTasks == [4, 5])
    }

    @Test func aSuspendedTaskNeitherRunsNorWaits() {
        var scheduler = Scheduler()
        #expect(scheduler.add(1, suspended: true) == [.saveQueueOrder])
        #expect(scheduler.task(1)?.wantsToRun == false)
        #expect(scheduler.waitingFor(1) == nil)
        #expect(scheduler.resume(1, now: ms(10)) == [.startAttempt(1), .saveQueueOrder])
        #expect(scheduler.resume(1, now: ms(20)) == [], "resuming a running task does nothing")
    }

    @Test func aSuspendedRunningTaskKeepsItsSlotUntilItsAttemptStops() {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        #expect(scheduler.suspend(1, now: ms(100)) == [.stopAttempt(1)])
        #expect(scheduler.attemptsInFlight == 1)
        #expect(scheduler.runningTasks == [])
        #expect(scheduler.attemptStopped(1, now: ms(150)) == [.publishWaitingFor(2, nil), .startAttempt(2)])
        #expect(scheduler.suspend(1, now: ms(160)) == [], "already suspended")
    }

    @Test func aSuspendedQueuedTaskLeavesTheQueue() {
        var scheduler = Scheduler.with(max: 1, tasks: 3)
        #expect(scheduler.suspend(2, now: ms(100)) == [.publishWaitingFor(2, nil)])
        #expect(scheduler.completed(1, now: ms(200)) == [.publishWaitingFor(3, nil), .startAttempt(3)])
    }

    @Test func aResumedTaskJoinsTheEndOfTheQueue() {
        var scheduler = Scheduler.with(max: 1, tasks: 3)
        _ = scheduler.suspend(2, now: ms(100))
        #expect(scheduler.resume(2, now: ms(200)) == [.publishWaitingFor(2, .slot), .saveQueueOrder])
        #expect(scheduler.queueOrder == [1, 3, 2])
        #expect(started(scheduler.completed(1, now: ms(300))) == [3])
    }

    @Test func aNewPriorityPutsTheTaskAtTheEndOfThatPrioritysQueue() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        scheduler.add(1)
        scheduler.add(2)
        scheduler.add(3, .background)
        scheduler.add(4)
        #expect(scheduler.priorityChanged(2, to: .background, now: ms(100)) == [.saveQueueOrder])
        #expect(scheduler.priorityChanged(2, to: .background, now: ms(110)) == [], "unchanged")
        #expect(scheduler.task(2)?.allowMetered == true, "AllowMetered is fixed at creation")
        #expect(started(scheduler.completed(1, now: ms(200))) == [4])
        #expect(started(scheduler.completed(4, now: ms(300))) == [3])
        #expect(started(scheduler.completed(3, now: ms(400))) == [2])
    }

    @Test func removingARunningTaskFreesItsSlotOnceItsAttemptStops() {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        #expect(scheduler.remove(1, now: ms(100)) == [.stopAttempt(1)])
        #expect(scheduler.task(1) == nil)
        #expect(!scheduler.queueOrder.contains(1))
        #expect(scheduler.attemptsInFlight == 1)
        #expect(scheduler.attemptFailed(1, retryDelay: .seconds(1), now: ms(150)) == [
            .publishWaitingFor(2, nil), .startAttempt(2),
        ])
        #expect(scheduler.attemptStopped(1, now: ms(160)) == [], "the task is gone")
        #expect(scheduler.remove(1, now: ms(170)) == [])
    }

    @Test func removingAQueuedTaskPublishesNothingMore() {
        var scheduler = Scheduler.with(max: 1, tasks: 3)
        #expect(scheduler.remove(2, now: ms(100)) == [])
        #expect(scheduler.queueOrder == [1, 3])
        #expect(started(scheduler.completed(1, now: ms(200))) == [3])
    }

    @Test func addingAKnownTaskAgainDoesNothing() {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        #expect(scheduler.add(2, .background, suspended: true) == [])
        #expect(scheduler.task(2)?.priority == .foreground)
        #expect(scheduler.queueOrder == [1, 2])
    }

    @Test func eventsForUnknownTasksDoNothing() {
        var scheduler = Scheduler.with(max: 1, tasks: 1)
        #expect(scheduler.suspend(9, now: ms(1)) == [])
        #expect(scheduler.resume(9, now: ms(1)) == [])
        #expect(scheduler.remove(9, now: ms(1)) == [])
        #expect(scheduler.completed(9, now: ms(1)) == [])
        #expect(scheduler.attemptStopped(9, now: ms(1)) == [])
        #expect(scheduler.attemptFailed(9, retryDelay: .seconds(1), now: ms(1)) == [])
        #expect(scheduler.priorityChanged(9, to: .background, now: ms(1)) == [])
        #expect(scheduler.urlChanged(9, isLoopback: true, now: ms(1)) == [])
        #expect(scheduler.failureSpendsRetry(9))
    }

    /// The saved order, replayed into a fresh scheduler (as after a restart), gives the same queue.
    @Test func theQueueOrderSurvivesARestart() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        for id: UInt32 in [7, 3, 9, 1] {
            scheduler.add(id, id == 9 ? .background : .foreground)
        }
        _ = scheduler.suspend(3, now: ms(10))
        _ = scheduler.resume(3, now: ms(20))
        #expect(scheduler.queueOrder == [7, 9, 1, 3])

        var restored = Scheduler(maxRunningTasks: 1)
        for id in scheduler.queueOrder {
            restored.add(id, scheduler.task(id)?.priority ?? .foreground)
        }
        #expect(restored.queueOrder == scheduler.queueOrder)
        var admitted: [UInt32] = restored.runningTasks
        while let running = restored.runningTasks.first {
            admitted += started(restored.completed(running, now: ms(100)))
        }
        #expect(admitted == [7, 1, 3, 9])
    }
}
