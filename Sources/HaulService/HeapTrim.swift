import CGlibcExtras
package import ServiceKit

/// Gives back to the system what hauld freed after a load, once, when the load is over: a single wake-up of an idle
/// hauld, never a timer that repeats. glibc keeps freed memory in its arenas (one per thread that allocated); only
/// `malloc_trim` hands the free pages inside them back.
///
/// Two loads end later than the last transfer's stop (which trims too):
/// - A finished transfer's connection waits in async-http-client's pool until it has been unused for
///   `TransferClient`'s idle timeout (60 s). Closing it frees its buffers: after 200 downloads, 4 to 6 MB stayed
///   resident. So a trim follows once the pool has closed what the last such transfer left in it.
/// - Calls: a caller's huge strings and deep values are decoded, answered and freed, and hauld's heap keeps the room
///   they took (hostile calls left 80 MB). So a trim follows once calls have stopped for ``quietPeriod``.
///
/// A later load moves the trim: one trim after the latest deadline, however many came before.
package actor HeapTrim {
    /// `TransferClient`'s idle timeout, and a margin for the pool's timer to have run.
    package static let poolIdleTimeout: Duration = .seconds(60) + .milliseconds(250)
    /// How long calls must have stopped before the heap is trimmed after them.
    package static let quietPeriod: Duration = .seconds(15)

    private let poolDelay: Duration
    private let callDelay: Duration
    private let trim: @Sendable () -> Void
    private let clock: any ServiceClock
    private var deadline: ContinuousClock.Instant?
    private var sleeper: Task<Void, Never>?

    /// `clock` and `trim` stand in for hauld's `EventLoopClock` and glibc's `malloc_trim(0)` in tests.
    package init(
        afterPool poolDelay: Duration = poolIdleTimeout, afterCalls callDelay: Duration = quietPeriod,
        clock: any ServiceClock = EventLoopClock(), trim: (@Sendable () -> Void)? = nil
    ) {
        self.poolDelay = poolDelay
        self.callDelay = callDelay
        self.clock = clock
        self.trim = trim ?? { malloc_trim(0) }
    }

    /// An attempt ended in a way that may have left its connection in the pool: not stopped, not cancelled (those
    /// close their connection at once).
    package func connectionReleased() {
        trim(after: poolDelay)
    }

    /// A call came in.
    package func callReceived() {
        trim(after: callDelay)
    }

    package func cancel() {
        sleeper?.cancel()
    }

    private func trim(after delay: Duration) {
        let requested = clock.now.advanced(by: delay)
        deadline = max(deadline ?? requested, requested)
        guard sleeper == nil else { return }
        sleeper = Task { await self.trimOnceDone() }
    }

    /// Sleeps until the latest deadline (a later request moves it), then trims.
    private func trimOnceDone() async {
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
