import HaulService
import HaulTransfer
import NIOCore
import NIOPosix
import Testing

@Suite(.timeLimit(.minutes(3))) struct EventLoopClockTests {
    let clock = EventLoopClock()

    @Test func aSleepEndsNoEarlierThanItsDeadline() async throws {
        let deadline = clock.now.advanced(by: .milliseconds(50))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    /// Returns rather than throwing or sleeping as if the deadline were an hour ahead. Not a speed target (how soon is
    /// left to the benchmarks): 10 s is far beyond any scheduling delay.
    @Test func aDeadlineAlreadyPastReturnsAtOnce() async throws {
        let started = ContinuousClock.now
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-3600)))
        // Far below the hour it would sleep if the past were taken for the future, far above a loaded machine's lag.
        #expect(ContinuousClock.now - started < .seconds(50), "slept for a deadline an hour in the past")
    }

    /// hauld runs Swift concurrency on NIO's loops: a sleep begun on one is timed by that loop, which is awake
    /// already, rather than by the next of the group, which its timer would wake.
    @Test func aSleepBegunOnAnEventLoopIsTimedByThatLoop() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        // Twice on each loop: the group's round robin would hand the two calls different loops.
        for loop in group.makeIterator() {
            let chosen = try await loop.submit { [EventLoopClock.timerLoop, EventLoopClock.timerLoop] }.get()
            #expect(chosen.allSatisfy { $0 === loop })
        }
    }

    @Test func cancellingEndsAnHourLongSleepWithCancellationError() async {
        let sleeper = Task { [clock] in try await clock.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func cancellingWhileAsleepWakesTheSleeper() async throws {
        try await expectCancellationEnds(sleepingFor: .seconds(3600), cancelledAfter: .milliseconds(20))
    }

    /// Coalescing with a rate gate, a sleep given a tolerance ends within it: no earlier than its deadline (the
    /// gate's own tests show it riding the limits' timer).
    @Test func aTolerantSleepEndsNoEarlierThanItsDeadline() async throws {
        let clock = EventLoopClock(coalescingWith: RateGate())
        let deadline = clock.now.advanced(by: .milliseconds(50))
        try await clock.sleep(until: deadline, tolerance: .milliseconds(100))
        #expect(clock.now >= deadline)
    }

    @Test func cancellingATolerantSleepEndsItWithCancellationError() async throws {
        try await expectCancellationEnds(
            of: EventLoopClock(coalescingWith: RateGate()), sleepingFor: .seconds(3600), tolerance: .seconds(1),
            cancelledAfter: .milliseconds(20)
        )
    }

    /// A deadline beyond what NIO can count in nanoseconds sleeps (as good as) forever, rather than wrapping around.
    @Test func aDeadlineCenturiesAwaySleepsUntilCancelled() async throws {
        try await expectCancellationEnds(sleepingFor: .seconds(Int64.max / 2), cancelledAfter: .milliseconds(200))
    }

    /// Starts a sleep on `clock` (with `tolerance`), lets it run `cancelledAfter` (the sleep may not have started yet:
    /// cancelling before or during it must both end it), then cancels it: it must end with `CancellationError`, not
    /// return.
    private func expectCancellationEnds(
        of clock: EventLoopClock = EventLoopClock(), sleepingFor duration: Duration, tolerance: Duration? = nil,
        cancelledAfter wait: Duration
    ) async throws {
        let asleep = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            asleep.continuation.yield()
            try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: tolerance)
        }
        for await _ in asleep.stream { break }
        try await clock.sleep(for: wait)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
