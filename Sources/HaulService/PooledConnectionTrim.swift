import CGlibcExtras
package import ServiceKit

/// Gives back to the system what async-http-client frees when it closes the connections it kept for reuse.
///
/// A finished transfer's connection waits in the client's pool until it has been unused for `TransferClient`'s idle
/// timeout (60 s). Closing it frees its buffers into glibc's per-thread arenas, which keep them, after the
/// `malloc_trim` that follows the last transfer's stop: after 200 downloads, 4 to 6 MB stayed resident. So one more
/// trim follows, once the pool has closed what the last such transfer left in it: a single wake-up of an idle hauld
/// a minute after its load, never a timer that repeats.
package actor PooledConnectionTrim {
    /// `TransferClient`'s idle timeout, and a margin for the pool's timer to have run.
    package static let poolIdleTimeout: Duration = .seconds(60) + .milliseconds(250)

    private let delay: Duration
    private let trim: @Sendable () -> Void
    private let clock: any ServiceClock
    private var deadline: ContinuousClock.Instant?
    private var sleeper: Task<Void, Never>?

    /// `clock` and `trim` stand in for hauld's `EventLoopClock` and glibc's `malloc_trim(0)` in tests.
    package init(
        after delay: Duration = poolIdleTimeout, clock: any ServiceClock = EventLoopClock(),
        trim: (@Sendable () -> Void)? = nil
    ) {
        self.delay = delay
        self.clock = clock
        self.trim = trim ?? { malloc_trim(0) }
    }

    /// An attempt ended in a way that may have left its connection in the pool: not stopped, not cancelled (those
    /// close their connection at once).
    package func connectionReleased() {
        deadline = clock.now.advanced(by: delay)
        guard sleeper == nil else { return }
        sleeper = Task { await self.trimOnceClosed() }
    }

    package func cancel() {
        sleeper?.cancel()
    }

    /// Sleeps until the latest release's connection has been closed (a later release moves the deadline), then trims.
    private func trimOnceClosed() async {
        defer { sleeper = nil }
        while let deadline, !Task.isCancelled {
            guard clock.now < deadline else {
                self.deadline = nil
                trim()
                return
            }
            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
        }
    }
}
