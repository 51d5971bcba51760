import HaulCore
import Testing

/// The work of an event does not grow with the number of tasks: the same events cost the scheduler the same number
/// of task visits with 500 tasks as with 5,000, and touching every task (`SuspendAll`, `ResumeAll`, `CancelAll`,
/// a restore) costs in proportion to their number. Counted, not timed; 500 against 5,000 tasks, serialized, so that
/// these CPU-bound tests never hold both of a small machine's cooperative threads while the bus tests wait.
@Suite("Transfer queue cost", .serialized, .timeLimit(.minutes(2)))
struct TransferQueueCostTests {
    /// A queue of `count` running tasks, 5 of them transferring.
    static func queue(_ count: UInt32) -> Queue {
        var queue = Queue(maxRunningTasks: 5)
        for id in 1...count {
            queue.add(id, id % 3 == 0 ? .background : .foreground)
        }
        return queue
    }

    /// Suspend and resume of a queued task, an attempt's end handing its slot on, a back-off and its timer, a new
    /// task, a cancel: what each costs, and how many actions it returns.
    static func perEventCost(_ count: UInt32) throws -> (visits: UInt64, actions: Int) {
        var queue = Self.queue(count)
        let before = queue.scheduler.visits
        var actions = 0
        actions += try queue.suspend(count / 2, now: ms(10)).count
        actions += try queue.resume(count / 2, now: ms(20)).count
        actions += queue.attemptEnded(1, .succeeded, now: ms(30)).count
        actions += queue.attemptEnded(2, .failed(.network("reset")), now: ms(40)).count
        actions += queue.timerFired(generation: 1, now: ms(1040)).count
        actions += queue.add(count + 1, at: ms(1050)).count
        actions += try queue.cancel(count - 1, now: ms(1060)).count
        actions += queue.priorityChanged(count - 2, to: .background, now: ms(1070)).count
        return (queue.scheduler.visits - before, actions)
    }

    @Test func anEventCostsTheSameWithTenTimesTheTasks() throws {
        let small = try Self.perEventCost(500)
        let large = try Self.perEventCost(5_000)
        #expect(large.actions == small.actions)
        #expect(large.visits == small.visits, "\(small.visits) visits with 500 tasks, \(large.visits) with 5,000")
        #expect(small.visits < 100)
    }

    /// Every task suspended, then resumed, then cancelled, one event each as the Manager's `*All` does: the visits
    /// per task stay the same at ten times the tasks.
    @Test func touchingEveryTaskCostsInProportion() throws {
        func visitsPerTask(_ count: UInt32) throws -> Double {
            var queue = Self.queue(count)
            let before = queue.scheduler.visits
            for id in 1...count { _ = try queue.suspend(id, now: ms(10)) }
            for id in 1...count { _ = try queue.resume(id, now: ms(20)) }
            for id in 1...count { _ = try queue.cancel(id, now: ms(30)) }
            return Double(queue.scheduler.visits - before) / Double(count)
        }
        let small = try visitsPerTask(500)
        let large = try visitsPerTask(5_000)
        #expect(large <= small * 1.1, "\(small) visits per task with 500 tasks, \(large) with 5,000")
    }

    @Test func aRestoreCostsInProportion() {
        func visitsPerTask(_ count: UInt32) -> Double {
            var queue = Queue(maxRunningTasks: 5)
            for id in 1...count {
                queue.restore(
                    id, state: id % 4 == 0 ? .suspended : .running, outcome: nil, crashLoop: CrashLoopGuard(),
                    traits: .init(), queuePosition: UInt64(count - id), maxRetries: 5
                )
            }
            for id in queue.restoredOrder() { _ = queue.continueRestored(id, now: ms(0)) }
            #expect(queue.scheduler.runningTaskCount == 5)
            return Double(queue.scheduler.visits) / Double(count)
        }
        let small = visitsPerTask(500)
        let large = visitsPerTask(5_000)
        #expect(large <= small * 1.1, "\(small) visits per task with 500 tasks, \(large) with 5,000")
    }
}
