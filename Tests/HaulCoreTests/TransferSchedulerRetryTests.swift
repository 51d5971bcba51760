import HaulCore
import Testing

/// Back-offs, the retry timer, and the rule that waiting never costs a retry.
@Suite("Transfer scheduler retries")
struct TransferSchedulerRetryTests {
    @Test func aFailedAttemptWaitsItsBackOffThenCompetesForASlot() {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        #expect(scheduler.failureSpendsRetry(1))
        let failed = scheduler.attemptFailed(1, retryDelay: .seconds(2), now: ms(1000))
        #expect(failed == [
            .publishWaitingFor(1, .retry), .publishWaitingFor(2, nil), .startAttempt(2),
            .armTimer(deadline: ms(3000), generation: 1),
        ])
        #expect(scheduler.task(1)?.retryDeadline == ms(3000))
        #expect(scheduler.timerFired(generation: 1, now: ms(3000)) == [.publishWaitingFor(1, .slot)])
        #expect(scheduler.task(1)?.retryDeadline == nil)
        #expect(scheduler.completed(2, now: ms(3500)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    @Test func aFailureWithoutADelayIsQueuedAtOnce() {
        var scheduler = Scheduler.with(max: 1, tasks: 1)
        #expect(scheduler.attemptFailed(1, retryDelay: nil, now: ms(100)) == [.startAttempt(1)])
        #expect(scheduler.attemptFailed(1, retryDelay: .zero, now: ms(200)) == [.startAttempt(1)])
    }

    /// A transfer that fails while the network is offline or a portal spends no retry and waits for the
    /// network; it continues by itself when the network is back.
    @Test(arguments: [NetworkState.offline, .portal])
    func aFailureWhileTheNetworkIsDownSpendsNoRetry(_ state: NetworkState) {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.networkChanged(to: state, now: ms(100))
        #expect(!scheduler.failureSpendsRetry(1))
        #expect(scheduler.attemptFailed(1, retryDelay: nil, now: ms(200)) == [.publishWaitingFor(1, .network)])
        let back = scheduler.networkChanged(to: .online, now: ms(90_000))
        #expect(back == [.publishWaitingFor(1, nil), .startAttempt(1)])
        #expect(scheduler.failureSpendsRetry(1))
    }

    @Test func aFailureAfterAStopSpendsNoRetry() {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.prepareForSleep(true, now: ms(100))
        #expect(!scheduler.failureSpendsRetry(1), "the scheduler stopped it")
        #expect(scheduler.attemptFailed(1, retryDelay: .seconds(5), now: ms(150)) == [], "counts as the stop")
        #expect(scheduler.task(1)?.retryDeadline == nil)
        #expect(scheduler.prepareForSleep(false, now: ms(200)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    /// A task that waits — for hours, through every condition — is only ever told why it waits: never started, never
    /// stopped, so it never has an attempt to fail.
    @Test func waitingNeverCostsAnAttempt() {
        var scheduler = Scheduler(networkState: .offline)
        scheduler.add(1)
        var actions: [Scheduler.Action] = []
        for hour in 1...12 {
            let now = ms(hour * 3_600_000)
            actions += scheduler.meteredChanged(to: hour % 2 == 0, now: now)
            actions += scheduler.powerSaverChanged(to: hour % 3 == 0, now: now)
            actions += scheduler.prepareForSleep(hour % 4 == 0, now: now)
            actions += scheduler.maxRunningTasksChanged(to: UInt32(hour % 3), now: now)
        }
        #expect(started(actions).isEmpty && stopped(actions).isEmpty)
        #expect(actions.allSatisfy { if case .publishWaitingFor(1, _) = $0 { true } else { false } })
        #expect(scheduler.task(1)?.attempt == .idle)
    }

    /// The back-off runs while the task waits for the network: once both are over it runs at once.
    @Test func aBackOffThatRanOutWhileOfflineDoesNotDelayTheTask() {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.attemptFailed(1, retryDelay: .seconds(1), now: ms(0))
        #expect(scheduler.networkChanged(to: .offline, now: ms(10)) == [.publishWaitingFor(1, .network)])
        #expect(scheduler.timerFired(generation: 1, now: ms(1000)) == [], "still waiting for the network")
        #expect(scheduler.networkChanged(to: .online, now: ms(5000)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    @Test func theTimerFollowsTheEarliestBackOff() {
        var scheduler = Scheduler.with(max: 5, tasks: 3)
        #expect(scheduler.attemptFailed(1, retryDelay: .seconds(8), now: ms(0)).last == .armTimer(
            deadline: ms(8000), generation: 1
        ))
        #expect(scheduler.attemptFailed(2, retryDelay: .seconds(2), now: ms(0)).last == .armTimer(
            deadline: ms(2000), generation: 2
        ))
        #expect(scheduler.attemptFailed(3, retryDelay: .seconds(4), now: ms(0)) == [.publishWaitingFor(3, .retry)])
        #expect(scheduler.timerFired(generation: 1, now: ms(8000)) == [], "stale: re-armed since")
        #expect(scheduler.timerFired(generation: 2, now: ms(2000)) == [
            .publishWaitingFor(2, nil), .startAttempt(2), .armTimer(deadline: ms(4000), generation: 3),
        ])
        #expect(scheduler.suspend(3, now: ms(3000)) == [
            .publishWaitingFor(3, nil), .armTimer(deadline: ms(8000), generation: 4),
        ])
        #expect(scheduler.remove(1, now: ms(3500)) == [.cancelTimer])
        #expect(scheduler.timerFired(generation: 4, now: ms(8000)) == [], "cancelled")
    }

    @Test func anEarlyTimerIsReArmedNotHonoured() {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.attemptFailed(1, retryDelay: .seconds(2), now: ms(0))
        #expect(scheduler.timerFired(generation: 1, now: ms(1999)) == [.armTimer(deadline: ms(2000), generation: 2)])
        #expect(scheduler.timerFired(generation: 1, now: ms(2000)) == [])
        #expect(scheduler.waitingFor(1) == .retry)
        #expect(scheduler.timerFired(generation: 2, now: ms(2000)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    /// A back-off that ran out is noticed by any event, not only by its timer: the owner's timer may be late.
    @Test func anyEventNoticesABackOffThatRanOut() {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.attemptFailed(1, retryDelay: .seconds(2), now: ms(0))
        #expect(scheduler.add(2, at: ms(2500)) == [
            .publishWaitingFor(1, nil), .startAttempt(1), .startAttempt(2), .cancelTimer, .saveQueueOrder,
        ])
        #expect(scheduler.timerFired(generation: 1, now: ms(2600)) == [], "already handled")
    }

    @Test func suspendingDuringABackOffForgetsIt() {
        var scheduler = Scheduler.with(max: 5, tasks: 1)
        _ = scheduler.attemptFailed(1, retryDelay: .seconds(30), now: ms(0))
        #expect(scheduler.suspend(1, now: ms(100)) == [.publishWaitingFor(1, nil), .cancelTimer])
        #expect(scheduler.resume(1, now: ms(200)) == [.startAttempt(1), .saveQueueOrder])
    }
}
