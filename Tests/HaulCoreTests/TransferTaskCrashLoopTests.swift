import HaulCore
import Testing

/// The crash-loop guard: a task whose attempt was in flight during two unclean exits of the owner in a row is restored
/// suspended with a notice, instead of being started a third time. Each owner run is a machine; what survives a crash
/// is what the last `.persist` saved of it (its `interruptedRuns`).
@Suite("Transfer task crash-loop guard", .timeLimit(.minutes(2)))
struct TransferTaskCrashLoopTests {
    @Test func aRunCountsWhileItsAttemptIsInFlight() {
        var machine = TaskMachine()
        #expect(machine.interruptedRuns == 0)
        #expect(machine.start(now: ms(0)) == [.startTransfer(attempt: 1)] + taskResuming, "saved with the state")
        #expect(machine.interruptedRuns == 1)
        #expect(machine.transferSucceeded(now: ms(10)) == taskCompleting(.success))
        #expect(machine.interruptedRuns == 0)
    }

    @Test func twoUncleanExitsInARowRestoreTheTaskSuspendedWithANotice() throws {
        var first = TaskMachine()
        _ = first.start(now: ms(0))
        // Killed mid-attempt: the record says running, interrupted once.
        var second = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: first.interruptedRuns)
        #expect(second.state == .running)
        #expect(second.interruptedRuns == 2, "counted at restore, so the owner saves it before the attempt")
        #expect(second.start(now: ms(0)) == [.startTransfer(attempt: 1)])
        // Killed mid-attempt again.
        var third = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: second.interruptedRuns)
        #expect(third.state == .suspended)
        #expect(third.notice == TaskMachine.interruptedNotice)
        #expect(third.interruptedRuns == 0)
        #expect(third.start(now: ms(0)) == [], "not started a third time")
        #expect(try third.resume(now: ms(10)) == [.startTransfer(attempt: 1)] + taskResuming)
        #expect(third.notice == nil, "Resume clears the notice")
        #expect(third.interruptedRuns == 1)
    }

    @Test func oneUncleanExitStillContinuesTheTask() {
        var machine = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: 0)
        #expect(machine.interruptedRuns == 1)
        #expect(machine.notice == nil)
        #expect(machine.start(now: ms(0)) == [.startTransfer(attempt: 1)])
    }

    @Test func anAttemptThatEndsByItselfStartsTheCountAgain() throws {
        var machine = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: 1)
        _ = machine.start(now: ms(0))
        #expect(
            machine.transferFailed(.network("reset"), now: ms(100)) == [
                .armRetryTimer(deadline: ms(1100), generation: 1), .persist,
            ],
            "the owner survived the attempt: saved, even though the state did not change"
        )
        #expect(machine.interruptedRuns == 0)
        #expect(machine.retryTimerFired(generation: 1, now: ms(1100)) == [.startTransfer(attempt: 2), .persist])
        #expect(machine.interruptedRuns == 1)
    }

    @Test func aStoppedAttemptEndsTheCountToo() throws {
        var machine = try TaskPhase.suspending.machine()
        #expect(machine.interruptedRuns == 1, "the suspended attempt is still stopping")
        #expect(machine.transferStopped(now: ms(250)) == [.persist])
        #expect(machine.interruptedRuns == 0)
    }

    @Test func aRestartWithTheAttemptStillInFlightSavesNothingNew() throws {
        var machine = try TaskPhase.restarting.machine()
        #expect(machine.transferStopped(now: ms(350)) == [.startTransfer(attempt: 1)])
        #expect(machine.interruptedRuns == 1)
    }

    @Test func aCleanStopStartsTheCountAgain() {
        var machine = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: 1)
        _ = machine.start(now: ms(0))
        #expect(machine.ownerStoppingCleanly() == [.persist])
        #expect(machine.interruptedRuns == 0)
        #expect(machine.state == .running, "the next start continues it")
        #expect(machine.ownerStoppingCleanly() == [])
        let restarted = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: machine.interruptedRuns)
        #expect(restarted.state == .running && restarted.interruptedRuns == 1)
    }

    @Test func aRestoredTaskSuspendedBeforeItStartsDoesNotCountThisRun() throws {
        var machine = TaskMachine(restoring: .running, outcome: nil, interruptedRuns: 1)
        #expect(try machine.suspend(now: ms(0)) == taskSuspending)
        #expect(machine.interruptedRuns == 1)
    }

    @Test func theNoticeStaysWhileSuspendedAndGoesOnCancel() throws {
        var machine = TaskMachine(restoring: .suspended, outcome: nil, notice: "why")
        #expect(machine.notice == "why", "a clean restart keeps it")
        #expect(try machine.suspend(now: ms(0)) == [])
        #expect(machine.notice == "why")
        #expect(try machine.cancel(now: ms(10)) == taskCompleting(cancelledOutcome))
        #expect(machine.notice == nil)
        #expect(TaskMachine(restoring: .running, outcome: nil, notice: "why").notice == nil, "only when suspended")
    }

    @Test func aDamagedCountNeverTraps() throws {
        var suspended = TaskMachine(restoring: .suspended, outcome: nil, interruptedRuns: .max)
        _ = try suspended.resume(now: ms(0))
        #expect(suspended.interruptedRuns == .max)
        #expect(TaskMachine(restoring: .running, outcome: nil, interruptedRuns: .max).state == .suspended)
    }
}
