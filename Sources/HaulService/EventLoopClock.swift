package import HaulTransfer
package import NIOCore
import NIOPosix
import ServiceKit

/// `ContinuousClock`'s time, with sleeps scheduled on NIO's event loops instead of libdispatch.
///
/// NIO waits on the monotonic clock, which stops while the system is suspended and `ContinuousClock` does not: a
/// sleep across a suspend ends late by the time suspended, never early. A cancelled sleep ends at once, but NIO
/// still wakes its loop once at the original deadline.
///
/// On Linux `Task.sleep` hands its wake-up to libdispatch's global pool, and the first job run there arms
/// libdispatch's worker-pool monitor: a 1 Hz timer that wakes the process for the rest of its life. hauld's
/// timers (retry back-off, progress ticker, indicator delays, tray tooltip) sleep here instead, and hauld runs Swift
/// concurrency on the same loops (its entry point), so an idle hauld has no timer that repeats.
///
/// A sleep given a tolerance ends at the first firing of the rate limits' timer within it, when the clock coalesces
/// with a ``RateGate``: the progress ticker of transfers held to a limit then wakes hauld no more often than the
/// limit does.
package struct EventLoopClock: ServiceClock {
    package typealias Instant = ContinuousClock.Instant

    /// Whose timer a sleep with a tolerance rides, if any.
    private let rates: RateGate?

    /// A clock whose sleeps with a tolerance ride `rates`' timer (``RateGate/ride(from:until:)``), or end at their
    /// deadline without one.
    package init(coalescingWith rates: RateGate? = nil) {
        self.rates = rates
    }

    package var now: Instant { ContinuousClock.now }

    package var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// The loop a sleep's timer is armed on: the one the caller runs on, if it runs on one. A timer armed on another
    /// loop wakes that loop to re-arm its wait, once per sleep (a limited download's progress tick, every second), and
    /// the sleeper resumes where the timer fires.
    package static var timerLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }

    /// Throws `CancellationError` as soon as the task is cancelled, like `Task.sleep`.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let woken: EventLoopFuture<Void>
        let cancel: @Sendable () -> Void
        if let rates, let tolerance, tolerance > .zero {
            let ride = rates.ride(from: deadline, until: deadline.advanced(by: tolerance))
            (woken, cancel) = (ride, { rates.cancelRide(ride) })
        } else {
            // TimeAmount clamps a delay beyond Int64.max nanoseconds (292 years); one in the past runs at once.
            // Scheduled before the handler is installed, so that a cancellation that comes first still finds it.
            let wakeUp = Self.timerLoop.scheduleTask(in: TimeAmount(now.duration(to: deadline))) {}
            (woken, cancel) = (wakeUp.futureResult, { wakeUp.cancel() })
        }
        do {
            try await withTaskCancellationHandler {
                try await woken.get()
            } onCancel: {
                cancel()
            }
        } catch {
            // The wake-up fails only when cancelled (or when its loop is shut down): either way it ended early.
            throw CancellationError()
        }
    }
}
