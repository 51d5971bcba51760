import HaulCore
import Testing

/// Each `WaitingFor` reason entering and leaving, their precedence, and loopback tasks that never wait for the
/// network's sake.
@Suite("Transfer scheduler wait reasons", .timeLimit(.minutes(2)))
struct TransferSchedulerWaitTests {
    @Test(arguments: [NetworkState.offline, .portal])
    func noAttemptStartsWithoutTheNetwork(_ state: NetworkState) {
        var scheduler = Scheduler(networkState: state)
        #expect(scheduler.add(1) == [.publishWaitingFor(1, .network), .saveQueueOrder])
        #expect(scheduler.add(2, .background) == [.publishWaitingFor(2, .network), .saveQueueOrder])
        let back = scheduler.networkChanged(to: .online, now: ms(500))
        #expect(back == [.publishWaitingFor(1, nil), .publishWaitingFor(2, nil), .startAttempt(1), .startAttempt(2)])
    }

    @Test(arguments: [NetworkState.online, .limited, .unknown])
    func usableNetworksLetAttemptsStart(_ state: NetworkState) {
        var scheduler = Scheduler(networkState: state)
        #expect(scheduler.add(1) == [.startAttempt(1), .saveQueueOrder])
    }

    /// A change of network state does not cut a running transfer.
    @Test(arguments: [NetworkState.offline, .portal])
    func losingTheNetworkDoesNotStopRunningAttempts(_ state: NetworkState) {
        var scheduler = Scheduler.with(max: 1, tasks: 2)
        #expect(scheduler.networkChanged(to: state, now: ms(100)) == [.publishWaitingFor(2, .network)])
        #expect(scheduler.runningTasks == [1])
        #expect(scheduler.waitingFor(1) == nil)
        #expect(scheduler.completed(1, now: ms(200)) == [], "the next task waits for the network, not a slot")
        #expect(scheduler.networkChanged(to: .limited, now: ms(300)) == [.publishWaitingFor(2, nil), .startAttempt(2)])
    }

    @Test func aMeteredNetworkHoldsTasksThatMayNotUseIt() {
        var scheduler = Scheduler(isMetered: true)
        #expect(scheduler.add(1, .background) == [.publishWaitingFor(1, .unmetered), .saveQueueOrder])
        #expect(scheduler.add(2, .foreground) == [.startAttempt(2), .saveQueueOrder], "foreground may by default")
        let forbidden = scheduler.add(3, .foreground, allowMetered: false)
        #expect(forbidden == [.publishWaitingFor(3, .unmetered), .saveQueueOrder])
        #expect(scheduler.add(4, .background, allowMetered: true) == [.startAttempt(4), .saveQueueOrder])
        let unmetered = scheduler.meteredChanged(to: false, now: ms(100))
        // Foreground before background, in publishing as in starting.
        #expect(unmetered == [
            .publishWaitingFor(3, nil), .publishWaitingFor(1, nil), .startAttempt(3), .startAttempt(1),
        ])
    }

    /// A metered network stops the running attempts of the tasks that may not use it, and they continue when it is no
    /// longer metered.
    @Test func goingMeteredStopsTasksThatMayNotUseIt() {
        var scheduler = Scheduler()
        scheduler.add(1, .background)
        scheduler.add(2)
        let metered = scheduler.meteredChanged(to: true, now: ms(100))
        #expect(metered == [.stopAttempt(1), .publishWaitingFor(1, .unmetered)])
        #expect(scheduler.runningTasks == [2])
        #expect(scheduler.attemptStopped(1, now: ms(150)) == [])
        #expect(scheduler.meteredChanged(to: false, now: ms(200)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    @Test func powerSaverHoldsBackgroundTasksOnly() {
        var scheduler = Scheduler()
        scheduler.add(1, .background)
        scheduler.add(2)
        #expect(scheduler.powerSaverChanged(to: true, now: ms(100)) == [.stopAttempt(1), .publishWaitingFor(1, .power)])
        #expect(scheduler.add(3, .background, at: ms(110)) == [.publishWaitingFor(3, .power), .saveQueueOrder])
        #expect(scheduler.attemptStopped(1, now: ms(150)) == [])
        #expect(scheduler.runningTasks == [2])
        let mains = scheduler.powerSaverChanged(to: false, now: ms(200))
        #expect(mains == [.publishWaitingFor(1, nil), .publishWaitingFor(3, nil), .startAttempt(1), .startAttempt(3)])
    }

    @Test func becomingBackgroundInPowerSaverStopsTheAttempt() {
        var scheduler = Scheduler(isPowerSaver: true)
        scheduler.add(1)
        let actions = scheduler.priorityChanged(1, to: .background, now: ms(100))
        #expect(actions == [.stopAttempt(1), .publishWaitingFor(1, .power), .saveQueueOrder])
    }

    /// A stopping attempt whose reason went away waits for its own slot, then runs again.
    @Test func aStopCannotBeTakenBackButTheTaskRunsAgainOnceStopped() {
        var scheduler = Scheduler()
        scheduler.add(1, .background)
        _ = scheduler.powerSaverChanged(to: true, now: ms(100))
        #expect(scheduler.powerSaverChanged(to: false, now: ms(110)) == [.publishWaitingFor(1, .slot)])
        #expect(scheduler.attemptStopped(1, now: ms(150)) == [.publishWaitingFor(1, nil), .startAttempt(1)])
    }

    /// `WaitingFor` shows the first of sleep, network, unmetered, power, retry, slot. Every condition holds at
    /// first; lifting them one by one reveals the next reason each time.
    @Test func theFirstReasonThatAppliesIsShown() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        scheduler.add(2, .background)
        let failed = scheduler.attemptFailed(2, retryDelay: .seconds(60), now: ms(0))
        #expect(failed == [.publishWaitingFor(2, .retry), .armTimer(deadline: ms(60_000), generation: 1)])
        scheduler.add(3, loopback: true)
        #expect(scheduler.runningTasks == [3])

        let sleeping = scheduler.prepareForSleep(true, now: ms(10))
        #expect(sleeping == [.stopAttempt(3), .publishWaitingFor(3, .sleep), .publishWaitingFor(2, .sleep)])
        #expect(scheduler.networkChanged(to: .portal, now: ms(10)) == [])
        #expect(scheduler.meteredChanged(to: true, now: ms(10)) == [])
        #expect(scheduler.powerSaverChanged(to: true, now: ms(10)) == [])
        #expect(scheduler.attemptStopped(3, now: ms(10)) == [])

        let awake = scheduler.prepareForSleep(false, now: ms(20))
        #expect(awake == [.publishWaitingFor(3, nil), .publishWaitingFor(2, .network), .startAttempt(3)])
        #expect(scheduler.networkChanged(to: .online, now: ms(30)) == [.publishWaitingFor(2, .unmetered)])
        #expect(scheduler.meteredChanged(to: false, now: ms(40)) == [.publishWaitingFor(2, .power)])
        #expect(scheduler.powerSaverChanged(to: false, now: ms(50)) == [.publishWaitingFor(2, .retry)])
        #expect(scheduler.timerFired(generation: 1, now: ms(60_000)) == [.publishWaitingFor(2, .slot)])
        #expect(scheduler.completed(3, now: ms(60_100)) == [.publishWaitingFor(2, nil), .startAttempt(2)])
    }

    @Test func reasonsAreOrderedByPrecedence() {
        #expect(WaitingFor.allCases == [.sleep, .network, .unmetered, .power, .retry, .slot])
        #expect(WaitingFor.allCases.sorted() == WaitingFor.allCases)
    }

    /// Loopback transfers never leave the machine: no network state, metered network or power profile holds them.
    @Test func loopbackTasksNeverWaitForTheNetworkMeteredOrPower() {
        for state in NetworkState.allCases {
            var scheduler = Scheduler(networkState: state, isMetered: true, isPowerSaver: true)
            #expect(scheduler.add(1, .background, loopback: true) == [.startAttempt(1), .saveQueueOrder], "\(state)")
            #expect(scheduler.failureSpendsRetry(1), "\(state)")
        }
    }

    @Test func loopbackTasksStillWaitForSleepAndSlots() {
        var scheduler = Scheduler(maxRunningTasks: 1)
        scheduler.add(1, loopback: true)
        #expect(scheduler.add(2, loopback: true) == [.publishWaitingFor(2, .slot), .saveQueueOrder])
        #expect(scheduler.prepareForSleep(true, now: ms(10)) == [
            .stopAttempt(1), .publishWaitingFor(1, .sleep), .publishWaitingFor(2, .sleep),
        ])
    }

    /// `SetURL` to or from a loopback host moves the task under or out of the network rules.
    @Test func aNewURLChangesWhetherTheNetworkRulesApply() {
        var scheduler = Scheduler(networkState: .offline)
        scheduler.add(1)
        let loopback = scheduler.urlChanged(1, isLoopback: true, now: ms(10))
        #expect(loopback == [.publishWaitingFor(1, nil), .startAttempt(1)])
        #expect(scheduler.urlChanged(1, isLoopback: true, now: ms(20)) == [], "unchanged")
        #expect(scheduler.urlChanged(1, isLoopback: false, now: ms(30)) == [], "a running attempt goes on")
        #expect(!scheduler.failureSpendsRetry(1))
    }
}
