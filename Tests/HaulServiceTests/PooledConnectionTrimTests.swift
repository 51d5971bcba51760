import HaulService
import HaulTestSupport
import Synchronization
import Testing

/// Each test allows for a machine too busy to make its second step within the delay: what it then checks is what
/// the trim must do in that order of events.
@Suite(.timeLimit(.minutes(1))) struct PooledConnectionTrimTests {
    let clock = EventLoopClock()
    let delay = Duration.seconds(1)

    /// The pool closes the connection of the latest release last: the trim waits for it, and happens once.
    @Test func aLaterReleaseMovesTheTrim() async throws {
        let trims = Mutex<[EventLoopClock.Instant]>([])
        let trim = PooledConnectionTrim(after: delay) { [clock] in trims.withLock { $0.append(clock.now) } }
        let firstRelease = clock.now
        await trim.connectionReleased()
        try await clock.sleep(for: .milliseconds(100))
        let lastRelease = clock.now
        await trim.connectionReleased()
        let released = clock.now
        try await waitUntil("the trim") { trims.withLock { !$0.isEmpty } }
        try await clock.sleep(for: delay)
        let times = trims.withLock { $0 }
        #expect(try #require(times.last) >= lastRelease.advanced(by: delay))
        if released < firstRelease.advanced(by: delay) {
            #expect(times.count == 1)
        }
    }

    @Test func aReleaseAfterATrimArmsAnotherOne() async throws {
        let count = Mutex(0)
        let trim = PooledConnectionTrim(after: .milliseconds(50)) { count.withLock { $0 += 1 } }
        await trim.connectionReleased()
        try await waitUntil("the first trim") { count.withLock { $0 == 1 } }
        await trim.connectionReleased()
        try await waitUntil("the second trim") { count.withLock { $0 == 2 } }
    }

    @Test func cancelledBeforeItsDeadlineItNeverTrims() async throws {
        let count = Mutex(0)
        let trim = PooledConnectionTrim(after: delay) { count.withLock { $0 += 1 } }
        let start = clock.now
        await trim.connectionReleased()
        await trim.cancel()
        let cancelled = clock.now
        try await clock.sleep(until: start.advanced(by: delay * 2))
        if cancelled < start.advanced(by: delay) {
            #expect(count.withLock { $0 } == 0)
        }
    }
}
