import HaulCore
import Testing

/// What a limit costs in wake-ups, in virtual time: readers that take grants as hauld's connections do (a whole grant
/// at once, read over many reads) get large grants, ask a few times a second, and are woken by one timer per limiter
/// that fires no more often than its grid allows, however many readers wait.
@Suite("Rate limiter wake-ups", .timeLimit(.minutes(2)))
struct RateLimiterWakeUpTests {
    static func reserving(_ ids: ClosedRange<UInt32>) -> [SimulatedReader] {
        ids.map { SimulatedReader(id: $0, reservesGrants: true) }
    }

    /// One download at its own 5 MiB/s (the bench's): every grant is at least 250 ms of the limit, at most 400 ms;
    /// the reader asks and the timer fires at most four times a second; the rate holds.
    @Test func oneTaskTakesAFewLargeGrantsASecond() {
        let limit = 5 * mebibyte
        var simulation = RateSimulation(readers: Self.reserving(1...1), ownLimits: [1: limit])
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
        #expect(simulation.grants.min().map { $0 >= limit / 4 } == true, "\(simulation.grants.min() ?? 0)")
        #expect(simulation.largestGrant <= limit * 2 / 5)
        #expect(simulation.timerFiringsPerSecond(seconds: 30) <= 4, "\(simulation.timerFirings.count) in 30 s")
        // A grant, then a wait: two asks for each.
        #expect(simulation.asks <= 2 * simulation.grants.count + 1)
        #expect(Double(simulation.grants.count) / 30 <= 4)
    }

    /// Four tasks sharing 4 MiB/s (the bench's): each takes a share of a round of 250 ms a few times a second, and
    /// the timer wakes all four together, once a round; the shares stay equal.
    @Test func fourTasksSharingALimitAreWokenOnceARound() {
        let limit = 4 * mebibyte
        var simulation = RateSimulation(globalLimit: limit, readers: Self.reserving(1...4))
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
        for id: UInt32 in 1...4 {
            #expect(simulation.windowsOff(rate: Double(limit / 4), from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
        // A grant is 250 ms of a share, less what the last read of the one before overdrew: about four a second each.
        let grantsPerTask = Double(simulation.grants.count) / 30 / 4
        #expect(grantsPerTask <= 4.5, "\(grantsPerTask) grants a second per task")
        let firings = simulation.timerFiringsPerSecond(seconds: 30)
        #expect(firings <= 1000 / 250 + 0.1, "once a round: \(firings) a second")
        #expect(Set(simulation.timerFirings).count == simulation.timerFirings.count, "one timer: one firing per instant")
    }

    /// More readers do not make the timer fire more often: sixteen tasks sharing a limit wake together, once a round,
    /// and each still gets its share.
    @Test func theTimerDoesNotFireMoreOftenWithMoreReaders() {
        let limit = 8 * mebibyte
        var simulation = RateSimulation(globalLimit: limit, readers: Self.reserving(1...16))
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
        for id: UInt32 in [1, 8, 16] {
            #expect(simulation.windowsOff(rate: Double(limit / 16), from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
        #expect(simulation.timerFiringsPerSecond(seconds: 30) <= 1000 / 250 + 0.1)
        #expect(Set(simulation.timerFirings).count == simulation.timerFirings.count)
    }

    /// Readers that reserve grants and overdraw them with their last read (whatever is left, in chunks of up to 16 KiB
    /// as TLS delivers them) still keep the limit: the overdraft is reported at the next ask and waited out.
    @Test(arguments: [64 * kibibyte, 1 * mebibyte, 64 * mebibyte])
    func reservingReadersKeepTheLimit(_ limit: Int) {
        let readers = { (ids: ClosedRange<UInt32>) in
            ids.map { SimulatedReader(id: $0, maxChunk: 16 * kibibyte, reservesGrants: true) }
        }
        var own = RateSimulation(readers: readers(1...1), ownLimits: [1: limit])
        own.run(seconds: 30)
        #expect(own.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
        var shared = RateSimulation(globalLimit: limit, readers: readers(1...3))
        shared.run(seconds: 30)
        #expect(shared.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
    }

    // MARK: The one timer

    @Test func theTimerIsArmedForTheEarliestDeadlineOnly() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        #expect(wakeUps.add("b", until: ms(100)) == ms(100))
        #expect(wakeUps.add("c", until: ms(150)) == nil, "a later deadline leaves the armed timer")
        #expect(wakeUps.add("d", until: ms(100)) == nil, "the same deadline too")
        #expect(wakeUps.add("a", until: ms(50)) == ms(50), "an earlier one re-arms it")
        #expect(wakeUps.timer == ms(50) && wakeUps.count == 4)
    }

    @Test func aFiringWakesEveryoneDueAndArmsForTheNext() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        _ = wakeUps.add("b", until: ms(100))
        _ = wakeUps.add("c", until: ms(150))
        _ = wakeUps.add("d", until: ms(100))
        let early = wakeUps.fire(now: ms(99))
        #expect(early.due.isEmpty && early.next == ms(100), "a timer that fired early is armed again")
        let fired = wakeUps.fire(now: ms(101))
        #expect(fired.due == ["b", "d"] && fired.next == ms(150))
        let last = wakeUps.fire(now: ms(150))
        #expect(last.due == ["c"] && last.next == nil && wakeUps.timer == nil && wakeUps.count == 0)
    }

    // MARK: Riders

    /// A rider wakes at the first firing within its window, for whichever waiter it comes: it arms nothing of its own.
    @Test func aRiderRidesTheFirstFiringWithinItsWindow() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        #expect(wakeUps.add("connection", until: ms(250)) == ms(250))
        #expect(wakeUps.ride("tick", from: ms(200), until: ms(500)) == nil, "the armed timer fires within the window")
        let fired = wakeUps.fire(now: ms(250))
        #expect(fired.due == ["connection", "tick"] && fired.next == nil)
    }

    /// A firing before a rider's window leaves it waiting; with none within, it is woken at the window's end.
    @Test func aRiderWithoutAFiringInItsWindowIsWokenAtItsEnd() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        #expect(wakeUps.ride("tick", from: ms(200), until: ms(500)) == ms(500), "nothing else arms the timer")
        #expect(wakeUps.add("connection", until: ms(100)) == ms(100))
        let early = wakeUps.fire(now: ms(100))
        #expect(early.due == ["connection"] && early.next == ms(500), "before the window: the rider waits on")
        let late = wakeUps.fire(now: ms(500))
        #expect(late.due == ["tick"] && late.next == nil)
    }

    /// A window that ends before it begins is a plain deadline at its beginning.
    @Test func aWindowEndingBeforeItBeginsIsADeadline() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        #expect(wakeUps.ride("tick", from: ms(300), until: ms(100)) == ms(300))
        #expect(wakeUps.fire(now: ms(299)).due.isEmpty)
        #expect(wakeUps.fire(now: ms(300)).due == ["tick"])
    }

    @Test func aRemovedWaiterIsNotWoken() {
        var wakeUps = RateWakeUps<TestInstant, String>()
        _ = wakeUps.add("connection", until: ms(250))
        _ = wakeUps.ride("tick", from: ms(200), until: ms(500))
        #expect(wakeUps.remove { $0 == "tick" } == "tick")
        #expect(wakeUps.remove { $0 == "tick" } == nil, "gone already")
        #expect(wakeUps.fire(now: ms(600)).due == ["connection"])
    }
}
