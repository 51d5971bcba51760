import HaulService
import Testing

@Suite struct EventLoopClockTests {
    let clock = EventLoopClock()

    @Test func aSleepEndsNoEarlierThanItsDeadline() async throws {
        let deadline = clock.now.advanced(by: .milliseconds(50))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    @Test func aDeadlineAlreadyPastReturnsAtOnce() async throws {
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-5)))
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingEndsAnHourLongSleepWithCancellationError() async {
        let sleeper = Task { [clock] in try await clock.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingWhileAsleepWakesTheSleeper() async throws {
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
}
