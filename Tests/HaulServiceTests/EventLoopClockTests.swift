import HaulService
import Testing

@Suite(.timeLimit(.minutes(1))) struct EventLoopClockTests {
    let clock = EventLoopClock()

    @Test func aSleepEndsNoEarlierThanItsDeadline() async throws {
        let deadline = clock.now.advanced(by: .milliseconds(50))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    @Test func aDeadlineAlreadyPastReturnsAtOnce() async throws {
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-5)))
    }

    @Test func cancellingEndsAnHourLongSleepWithCancellationError() async {
        let sleeper = Task { [clock] in try await clock.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func cancellingWhileAsleepWakesTheSleeper() async throws {
        let asleep = AsyncStream<Void>.makeStream()
        let sleeper = Task { [clock] in
            asleep.continuation.yield()
            try await clock.sleep(for: .seconds(3600))
        }
        for await _ in asleep.stream { break }
        // The sleep may not have started yet; cancelling before or during it must both end it.
        try await clock.sleep(for: .milliseconds(20))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    /// A deadline beyond what NIO can count in nanoseconds sleeps (as good as) forever, rather than wrapping around.
    @Test func aDeadlineCenturiesAwaySleepsUntilCancelled() async throws {
        let asleep = AsyncStream<Void>.makeStream()
        let sleeper = Task { [clock] in
            asleep.continuation.yield()
            try await clock.sleep(until: clock.now.advanced(by: .seconds(Int64.max / 2)))
        }
        for await _ in asleep.stream { break }
        try await clock.sleep(for: .milliseconds(200))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
