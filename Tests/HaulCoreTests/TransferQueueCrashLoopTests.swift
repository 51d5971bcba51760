import HaulCore
import Testing

/// The crash-loop guard: a task whose attempt was in flight during two unclean exits of the owner in a row is restored
/// suspended with a notice, instead of being started a third time. Each owner run is a queue; what survives a crash is
/// what the last `persist` saved (the guard as it stood).
@Suite("Transfer queue crash-loop guard", .timeLimit(.minutes(2)))
struct TransferQueueCrashLoopTests {
    /// hauld killed: a new queue restores every task from what was saved, and continues them.
    static func restart(_ queue: Queue, max: UInt32 = 5) -> (Queue, [QueueAction]) {
        var next = Queue(maxRunningTasks: max)
        for id in queue.restoredOrder() {
            guard let entry = queue.entry(id) else { continue }
            let saved = CrashLoopGuard(interruptedRuns: entry.crashLoop.interruptedRuns, notice: entry.crashLoop.notice)
            next.restore(
                id, state: entry.lifecycle.state, outcome: entry.lifecycle.outcome, crashLoop: saved,
                traits: entry.traits, queuePosition: entry.queuePosition, maxRetries: entry.lifecycle.maxRetries
            )
        }
        var actions: [QueueAction] = []
        for id in next.restoredOrder() { actions += next.continueRestored(id, now: ms(0)) }
        return (next, actions)
    }

    @Test func aRunCountsOnlyWhileItsAttemptIsInFlight() {
        var queue = Queue()
        queue.add(1)
        #expect(queue.entry(1)?.crashLoop.interruptedRuns == 1)
        #expect(queue.attemptEnded(1, .succeeded, now: ms(10)).contains(.persist(1)))
        #expect(queue.entry(1)?.crashLoop.interruptedRuns == 0)
    }

    @Test func twoUncleanExitsInARowRestoreTheTaskSuspendedWithANotice() throws {
        var first = Queue()
        first.add(1)
        let (second, started) = Self.restart(first)
        #expect(startedAttempts(started) == [1], "one unclean exit: continued")
        #expect(second.entry(1)?.crashLoop.interruptedRuns == 2)
        var (third, actions) = Self.restart(second)
        #expect(startedAttempts(actions) == [], "not started a third time")
        #expect(actions == [.persist(1)], "saved suspended, silently")
        #expect(third.shown(1) == "suspended")
        #expect(third.entry(1)?.crashLoop.notice == CrashLoopGuard.trippedNotice)
        #expect(third.entry(1)?.crashLoop.interruptedRuns == 0)
        let resumed = try third.resume(1, now: ms(10))
        #expect(startedAttempts(resumed) == [1])
        #expect(third.entry(1)?.crashLoop.notice == nil, "Resume clears the notice")
    }

    /// Last turn's bug: a task the queue held back was counted, and suspended after two crashes it never took part
    /// in. Only the transferring task is.
    @Test func aTaskHeldBackInTheQueueIsNeverCounted() {
        let first = Queue.with(max: 1, tasks: 2)
        #expect(first.entry(2)?.crashLoop.interruptedRuns == 0)
        let (second, _) = Self.restart(first, max: 1)
        #expect(second.entry(1)?.crashLoop.interruptedRuns == 2)
        #expect(second.entry(2)?.crashLoop.interruptedRuns == 0, "queued again: nothing in flight")
        let (third, actions) = Self.restart(second, max: 1)
        #expect(third.shown(1) == "suspended")
        #expect(third.shown(2) == "running", "the queued one goes on, and takes the free slot")
        #expect(startedAttempts(actions) == [2])
        #expect(third.entry(2)?.crashLoop.interruptedRuns == 1)
    }

    @Test func aStoppedAttemptEndsTheCountAndACleanStopToo() throws {
        var queue = Queue.with(max: 2, tasks: 2)
        _ = try queue.suspend(1, now: ms(10))
        #expect(queue.entry(1)?.crashLoop.interruptedRuns == 1, "the suspended attempt is still stopping")
        #expect(queue.attemptEnded(1, .stopped, now: ms(20)) == [.persist(1)])
        #expect(queue.entry(1)?.crashLoop.interruptedRuns == 0)
        #expect(queue.ownerStoppingCleanly() == [.persist(2)])
        #expect(queue.ownerStoppingCleanly() == [])
        let (restarted, _) = Self.restart(queue)
        #expect(restarted.entry(2)?.crashLoop.interruptedRuns == 1, "counted again from the clean start")
    }

    @Test func theNoticeStaysWhileSuspendedAndGoesOnCancel() throws {
        var queue = Queue()
        queue.restore(
            1, state: .suspended, outcome: nil, crashLoop: CrashLoopGuard(notice: "why"), traits: .init(),
            queuePosition: 1, maxRetries: 5
        )
        queue.restore(
            2, state: .running, outcome: nil, crashLoop: CrashLoopGuard(notice: "why"), traits: .init(),
            queuePosition: 2, maxRetries: 5
        )
        #expect(queue.entry(2)?.crashLoop.notice == nil, "only a suspended task keeps one")
        _ = queue.continueRestored(1, now: ms(0))
        #expect(queue.entry(1)?.crashLoop.notice == "why", "a clean restart keeps it")
        #expect(try queue.suspend(1, now: ms(0)) == [])
        let cancelled = try queue.cancel(1, now: ms(10))
        #expect(cancelled.contains(.persist(1)))
        #expect(queue.entry(1)?.crashLoop.notice == nil)
    }

    @Test func aDamagedCountNeverTraps() {
        var saturated = CrashLoopGuard(interruptedRuns: .max)
        saturated.attemptStarted()
        #expect(saturated.interruptedRuns == .max)
        let continues = saturated.mayContinueRestored()
        #expect(!continues)
        #expect(saturated.interruptedRuns == 0 && saturated.notice == CrashLoopGuard.trippedNotice)
        var once = CrashLoopGuard(interruptedRuns: 1)
        let onceContinues = once.mayContinueRestored()
        #expect(onceContinues)
        once.attemptStarted()
        once.attemptStarted()
        #expect(once.interruptedRuns == 2, "one run counts once")
    }
}
