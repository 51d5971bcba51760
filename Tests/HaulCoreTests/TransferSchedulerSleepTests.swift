import HaulCore
import Testing

/// logind's `PrepareForSleep` cycle: every attempt stops, every task waits `sleep`, and all continue on wake-up.
@Suite("Transfer scheduler sleep")
struct TransferSchedulerSleepTests {
    @Test func aFullSleepCycle() {
        var scheduler = Scheduler.with(max: 2, tasks: 3)
        scheduler.add(4, suspended: true)

        let sleeping = scheduler.prepareForSleep(true, now: ms(1000))
        #expect(sleeping == [
            .stopAttempt(1), .stopAttempt(2),
            .publishWaitingFor(1, .sleep), .publishWaitingFor(2, .sleep), .publishWaitingFor(3, .sleep),
        ])
        #expect(scheduler.runningTasks == [], "queued at once: nothing counts as running")
        #expect(scheduler.attemptsInFlight == 2, "the inhibitor is held until the attempts have stopped")
        #expect(scheduler.attemptStopped(2, now: ms(1100)) == [])
        #expect(scheduler.attemptStopped(1, now: ms(1200)) == [])
        #expect(scheduler.attemptsInFlight == 0)
        #expect(scheduler.prepareForSleep(true, now: ms(1300)) == [], "told twice")

        let awake = scheduler.prepareForSleep(false, now: ms(60_000))
        #expect(awake == [
            .publishWaitingFor(1, nil), .publishWaitingFor(2, nil), .publishWaitingFor(3, .slot),
            .startAttempt(1), .startAttempt(2),
        ])
        #expect(scheduler.waitingFor(4) == nil, "a suspended task stays out of it")
    }

    @Test func aWakeUpWithoutNetworkWaitsForIt() {
        var scheduler = Scheduler.with(max: 5, tasks: 2)
        _ = scheduler.prepareForSleep(true, now: ms(0))
        _ = scheduler.attemptStopped(1, now: ms(10))
        _ = scheduler.attemptStopped(2, now: ms(10))
        #expect(scheduler.networkChanged(to: .offline, now: ms(20)) == [], "sleep comes first")
        #expect(scheduler.prepareForSleep(false, now: ms(5000)) == [
            .publishWaitingFor(1, .network), .publishWaitingFor(2, .network),
        ])
        #expect(scheduler.networkChanged(to: .online, now: ms(8000)) == [
            .publishWaitingFor(1, nil), .publishWaitingFor(2, nil), .startAttempt(1), .startAttempt(2),
        ])
    }

    @Test func tasksAddedOrResumedDuringSleepWait() {
        var scheduler = Scheduler()
        scheduler.add(1, suspended: true)
        _ = scheduler.prepareForSleep(true, now: ms(0))
        #expect(scheduler.add(2, loopback: true, at: ms(10)) == [.publishWaitingFor(2, .sleep), .saveQueueOrder])
        #expect(scheduler.resume(1, now: ms(20)) == [.publishWaitingFor(1, .sleep), .saveQueueOrder])
    }

    /// A wake-up before the attempts stopped: they finish stopping, then run again.
    @Test func aWakeUpBeforeTheStopsFinished() {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        _ = scheduler.prepareForSleep(true, now: ms(0))
        let awake = scheduler.prepareForSleep(false, now: ms(50))
        #expect(awake == [.publishWaitingFor(1, .slot), .publishWaitingFor(2, .slot)])
        #expect(scheduler.attemptStopped(1, now: ms(100)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }
}
