package import HaulCore
package import NIOCore
import Synchronization

/// The bandwidth limits as the connections see them: one ``RateLimiter`` per direction, shared by every connection
/// of every task, asked before each read of a response (downloads) and before each chunk of a request body is read
/// from disk (uploads).
///
/// A connection over its share does not read until the limiter's deadline: async-http-client then stops reading
/// the socket, and the kernel's TCP window slows the sender down. Nothing sleeps and nothing is buffered.
package final class RateGate: Sendable {
    package enum Direction: Sendable {
        case download, upload
    }

    package typealias Limiter = RateLimiter<ContinuousClock.Instant>

    private struct Limiters {
        var download: Limiter
        var upload: Limiter

        /// Runs `body` on the limiter of `direction` in place: a get-and-set subscript would copy the limiter, and with
        /// it every task's state, on each body part.
        mutating func update<Result>(_ direction: Direction, _ body: (inout Limiter) -> Result) -> Result {
            switch direction {
            case .download: body(&download)
            case .upload: body(&upload)
            }
        }
    }

    private let limiters: Mutex<Limiters>

    package init() {
        let now = ContinuousClock.now
        limiters = Mutex(Limiters(download: Limiter(now: now), upload: Limiter(now: now)))
    }

    /// The limit for all tasks of `direction` together, in bytes per second (0: none).
    package func setGlobalLimit(_ bytesPerSecond: UInt64, for direction: Direction) {
        limiters.withLock { $0.update(direction) { $0.setGlobalLimit(bytesPerSecond, now: .now) } }
    }

    /// The task's own limit, in bytes per second (0: none); the global one still applies.
    package func setLimit(_ bytesPerSecond: UInt64, of task: UInt32, direction: Direction) {
        limiters.withLock { $0.update(direction) { $0.setLimit(bytesPerSecond, of: task, now: .now) } }
    }

    /// The task stopped transferring: what it held of a global limit goes back to the others.
    package func remove(_ task: UInt32) {
        limiters.withLock {
            $0.download.remove(task, now: .now)
            $0.upload.remove(task, now: .now)
        }
    }

    /// What one connection of `task` asks and reports.
    package func meter(for task: UInt32, direction: Direction) -> RateMeter {
        RateMeter(gate: self, task: task, direction: direction)
    }

    fileprivate func permit(_ task: UInt32, _ direction: Direction) -> Limiter.Permit {
        limiters.withLock { $0.update(direction) { $0.permit(for: task, now: .now) } }
    }

    fileprivate func consumed(_ bytes: Int, _ task: UInt32, _ direction: Direction) {
        limiters.withLock { $0.update(direction) { $0.consumed(bytes, by: task, now: .now) } }
    }
}

/// One connection's view of the ``RateGate``: it reports what it transferred and asks when it may go on.
package struct RateMeter: Sendable {
    let gate: RateGate
    let task: UInt32
    let direction: RateGate.Direction

    /// `bytes` went over the wire (or into the request body).
    func consumed(_ bytes: Int) {
        gate.consumed(bytes, task, direction)
    }

    /// Succeeds once the connection may read again: what a response's next body part waits for. Without a wait it is
    /// the loop's completed future, so an unlimited transfer allocates nothing per body part.
    func ready(on loop: any EventLoop) -> EventLoopFuture<Void> {
        switch gate.permit(task, direction) {
        case .unlimited, .read: loop.makeSucceededVoidFuture()
        case .wait(let deadline): after(deadline, on: loop) { ready(on: loop) }
        }
    }

    /// Succeeds once the connection may transfer again, with how many bytes it may take (nil: no limit applies).
    /// Until then it does not read, so the waiting happens in the TCP window, not in a buffer.
    func allowance(on loop: any EventLoop) -> EventLoopFuture<Int?> {
        switch gate.permit(task, direction) {
        case .unlimited: loop.makeSucceededFuture(nil)
        case .read(let maxBytes): loop.makeSucceededFuture(maxBytes)
        case .wait(let deadline): after(deadline, on: loop) { allowance(on: loop) }
        }
    }

    /// Asks `again` once `deadline` has come; the limiter never asks for more than a second (`RateLimiter.maximumWait`).
    private func after<Value: Sendable>(
        _ deadline: ContinuousClock.Instant, on loop: any EventLoop,
        again: @escaping @Sendable () -> EventLoopFuture<Value>
    ) -> EventLoopFuture<Value> {
        let delay = TimeAmount(ContinuousClock.now.duration(to: deadline))
        return loop.scheduleTask(in: delay) {}.futureResult.flatMap { again() }
    }
}

extension TransferKind {
    /// Which of the gate's limits applies to a task of this kind.
    package var rateDirection: RateGate.Direction {
        switch self {
        case .download: .download
        case .upload: .upload
        }
    }
}
