package import HaulCore
package import NIOCore
import NIOPosix
import Synchronization

/// The bandwidth limits as the connections see them: one ``RateLimiter`` per direction, shared by every connection
/// of every task, asked by a ``RateMeter`` when its connection has read what it was granted (downloads) or before a
/// chunk of a request body is read from disk (uploads).
///
/// A connection over its share does not read until the limiter's deadline: async-http-client then stops reading
/// the socket, and the kernel's TCP window slows the sender down. Nothing sleeps and nothing is buffered. The
/// connections waiting on one direction's limiter are woken by one timer (``RateWakeUps``), and a transfer no limit
/// applies to never takes the gate's lock on its way (``RateMeter``).
///
/// Every connection a limit (of at most ``oneLoopLimit``) applies to when it starts runs on the gate's one event loop
/// (``loop``): the timer then wakes one thread, which reads each socket whose grant came, where connections spread
/// over the group's loops would wake every loop, and each wake-up on one loop would hand work to the other.
///
/// A timer of hauld's that may fire a little late (the progress ticker's, while every transfer is held to a limit)
/// rides the gate's (``ride(from:until:)``) instead of waking that thread once more.
package final class RateGate: Sendable {
    package enum Direction: Sendable {
        case download, upload
    }

    package typealias Limiter = RateLimiter<ContinuousClock.Instant>
    typealias WakeUps = RateWakeUps<ContinuousClock.Instant, EventLoopPromise<Void>>

    /// One direction's limiter, the connections waiting for its deadlines and the timer that wakes them.
    private struct Side {
        var limiter: Limiter
        var wakeUps = WakeUps()
        var timer: Scheduled<Void>?

        init(now: ContinuousClock.Instant) {
            limiter = Limiter(now: now)
        }
    }

    private struct Sides {
        var download: Side
        var upload: Side

        /// Runs `body` on the side of `direction` in place: a get-and-set subscript would copy the limiter, and with
        /// it every task's state, on each grant.
        mutating func update<Result>(_ direction: Direction, _ body: (inout Side) -> Result) -> Result {
            switch direction {
            case .download: body(&download)
            case .upload: body(&upload)
            }
        }
    }

    private let sides: Mutex<Sides>
    /// Counts the changes of a limit in each direction: a meter told that no limit applies keeps that answer, without
    /// asking (and without the lock), until the count moves.
    private let downloadChanges = Atomic<UInt64>(0)
    private let uploadChanges = Atomic<UInt64>(0)

    /// Where the limited connections run (``RateMeter/loop``), and so the timer that wakes them.
    package let loop: any EventLoop
    /// The highest limit under which a connection runs on ``loop``: one core moves 500–800 MiB/s (the bench's unlimited
    /// download takes 1.2–2 s of CPU per GiB), so that even several tasks held to this share it without waiting for it.
    package static let oneLoopLimit: UInt64 = 64 << 20

    package init() {
        loop = MultiThreadedEventLoopGroup.singleton.next()
        let now = ContinuousClock.now
        sides = Mutex(Sides(download: Side(now: now), upload: Side(now: now)))
    }

    /// The limit for all tasks of `direction` together, in bytes per second (0: none).
    package func setGlobalLimit(_ bytesPerSecond: UInt64, for direction: Direction) {
        sides.withLock {
            $0.update(direction) { $0.limiter.setGlobalLimit(bytesPerSecond, now: .now) }
            countChange(direction)
        }
    }

    /// The task's own limit, in bytes per second (0: none); the global one still applies.
    package func setLimit(_ bytesPerSecond: UInt64, of task: UInt32, direction: Direction) {
        sides.withLock {
            $0.update(direction) { side in
                // A task added without a limit changes nobody's answer: the meters told "no limit" keep it.
                let unchanged = (side.limiter.limit(of: task) ?? 0) == bytesPerSecond
                side.limiter.setLimit(bytesPerSecond, of: task, now: .now)
                if !unchanged { countChange(direction) }
            }
        }
    }

    /// The task stopped transferring: what it held of a global limit goes back to the others.
    package func remove(_ task: UInt32) {
        sides.withLock {
            $0.download.limiter.remove(task, now: .now)
            $0.upload.limiter.remove(task, now: .now)
        }
    }

    /// What the connections of one attempt of `task` ask and report.
    package func meter(for task: UInt32, direction: Direction) -> RateMeter {
        RateMeter(gate: self, task: task, direction: direction)
    }

    /// A socket receive buffer for a connection of `task` under the limits now, or nil when none applies: a quarter of
    /// a second of the tighter one (at least 32 KiB, at most 8 MiB), which Linux doubles to half a second, of which
    /// TCP fills about half or more: a grant's 250–300 ms. The buffer refills between grants, and a grant is read in
    /// one go, without the buffer holding much more than one.
    func receiveBuffer(for task: UInt32, direction: Direction) -> Int? {
        tightestLimit(for: task, direction: direction).map { Int(min(max($0 / 4, 32 << 10), 8 << 20)) }
    }

    /// The tighter of the task's own limit and the global one of `direction` now, nil when neither applies.
    func tightestLimit(for task: UInt32, direction: Direction) -> UInt64? {
        let limits = sides.withLock { sides in
            sides.update(direction) { [$0.limiter.limit(of: task) ?? 0, $0.limiter.globalLimit] }
        }
        return limits.filter { $0 > 0 }.min()
    }

    /// How many times a limit of `direction` changed.
    func changeCount(_ direction: Direction) -> UInt64 {
        switch direction {
        case .download: downloadChanges.load(ordering: .acquiring)
        case .upload: uploadChanges.load(ordering: .acquiring)
        }
    }

    private func countChange(_ direction: Direction) {
        switch direction {
        case .download: downloadChanges.add(1, ordering: .releasing)
        case .upload: uploadChanges.add(1, ordering: .releasing)
        }
    }

    /// The answer to a meter that has spent its grants.
    enum Grant {
        /// No limit applies, as of the given change count.
        case unlimited(changeCount: UInt64)
        /// The meter holds `bytes` again.
        case read(bytes: Int)
        /// Ask again once this succeeds.
        case wait(EventLoopFuture<Void>)
    }

    /// Settles what `meter` owes (bytes it transferred beyond its grants) and takes its next grant, which the meter
    /// holds from then on; or registers it with the direction's timer, on `loop`.
    func grant(_ meter: RateMeter, on loop: any EventLoop) -> Grant {
        sides.withLock { sides in
            sides.update(meter.direction) { side in
                let now = ContinuousClock.now
                let changeCount = changeCount(meter.direction)
                let held = meter.held
                // Another connection of the attempt took a grant meanwhile.
                if held > 0 { return .read(bytes: held) }
                if held < 0 {
                    side.limiter.consumed(-held, by: meter.task, now: now)
                    meter.settle(-held)
                }
                switch side.limiter.permit(for: meter.task, now: now) {
                case .unlimited:
                    return .unlimited(changeCount: changeCount)
                case .read(let maxBytes):
                    // Reported as taken: no other connection of the task can be granted the same bytes.
                    side.limiter.consumed(maxBytes, by: meter.task, now: now)
                    meter.settle(maxBytes)
                    return .read(bytes: meter.held)
                case .wait(let deadline):
                    let promise = loop.makePromise(of: Void.self)
                    if let instant = side.wakeUps.add(promise, until: deadline) {
                        side.timer?.cancel()
                        side.timer = schedule(meter.direction, at: instant, on: loop)
                    }
                    return .wait(promise.futureResult)
                }
            }
        }
    }

    /// Succeeds at the first firing of a limit's timer from `earliest` on, or at `latest` if none fired by then: a
    /// wake-up that may come a little late rides one the limited connections make anyway, on ``loop``. It rides the
    /// download side's timer unless only the upload side's is armed.
    package func ride(from earliest: ContinuousClock.Instant, until latest: ContinuousClock.Instant)
        -> EventLoopFuture<Void>
    {
        let promise = loop.makePromise(of: Void.self)
        sides.withLock { sides in
            let direction: Direction = sides.download.timer == nil && sides.upload.timer != nil ? .upload : .download
            sides.update(direction) { side in
                if let instant = side.wakeUps.ride(promise, from: earliest, until: latest) {
                    side.timer?.cancel()
                    side.timer = schedule(direction, at: instant, on: loop)
                }
            }
        }
        return promise.futureResult
    }

    /// Ends a ride (``ride(from:until:)``) before its time: it fails with `CancellationError`.
    package func cancelRide(_ ride: EventLoopFuture<Void>) {
        let promise = sides.withLock { sides in
            sides.download.wakeUps.remove { $0.futureResult === ride }
                ?? sides.upload.wakeUps.remove { $0.futureResult === ride }
        }
        promise?.fail(CancellationError())
    }

    /// The direction's timer, to fire at `instant` on `loop`.
    private func schedule(_ direction: Direction, at instant: ContinuousClock.Instant, on loop: any EventLoop)
        -> Scheduled<Void>
    {
        loop.scheduleTask(in: TimeAmount(ContinuousClock.now.duration(to: instant))) { [self] in
            fire(direction, on: loop)
        }
    }

    /// Wakes the connections whose deadline has come, and arms the timer for the next one.
    private func fire(_ direction: Direction, on loop: any EventLoop) {
        let due = sides.withLock { sides in
            sides.update(direction) { side in
                let (due, next) = side.wakeUps.fire(now: .now)
                side.timer = next.map { schedule(direction, at: $0, on: loop) }
                return due
            }
        }
        for promise in due { promise.succeed() }
    }
}

/// What the connections of one attempt ask of the ``RateGate`` and report to it.
///
/// The meter holds the bytes its grants allow and spends them as its connections transfer, with one atomic
/// subtraction each, asking the gate (and taking its lock) only when they are spent: a few times a second under a
/// limit. A meter told that no limit applies asks again only when a limit changes: an unlimited transfer's body path
/// reads two atomics and takes no lock.
package final class RateMeter: Sendable {
    let gate: RateGate
    let task: UInt32
    let direction: RateGate.Direction
    /// Bytes of the grants taken and not yet transferred; below zero, bytes transferred beyond them, still to report.
    private let balance = Atomic<Int>(0)
    /// The gate's change count when it said that no limit applies; `.max` while it has not.
    private let unlimitedAsOf = Atomic<UInt64>(.max)
    /// Set when the attempt ended: a connection still waiting asks nothing more (its task is no longer the gate's).
    private let isClosed = Atomic<Bool>(false)

    init(gate: RateGate, task: UInt32, direction: RateGate.Direction) {
        self.gate = gate
        self.task = task
        self.direction = direction
    }

    /// What the meter holds, as the gate reads it under its lock.
    var held: Int { balance.load(ordering: .relaxed) }

    /// The gate added `bytes` to what the meter holds.
    func settle(_ bytes: Int) {
        balance.add(bytes, ordering: .relaxed)
    }

    private var isUnlimited: Bool {
        unlimitedAsOf.load(ordering: .relaxed) == gate.changeCount(direction)
    }

    /// `bytes` went over the wire (or into the request body).
    func consumed(_ bytes: Int) {
        guard !isUnlimited else { return }
        balance.subtract(bytes, ordering: .relaxed)
    }

    /// Whether a limit applies to the task now, its own or the global one of its direction.
    var isLimited: Bool { gate.tightestLimit(for: task, direction: direction) != nil }

    /// The receive buffer a new connection of the attempt should have (``RateGate/receiveBuffer(for:direction:)``).
    var receiveBuffer: Int? { gate.receiveBuffer(for: task, direction: direction) }

    /// How much a segment's connection writes between two write-outs under the limits now (``Writeback``).
    package var segmentWritebackChunk: UInt64 {
        Writeback.segmentChunk(underLimit: gate.tightestLimit(for: task, direction: direction))
    }

    /// The event loop a new connection of the attempt should run on: the gate's while a limit of at most
    /// ``RateGate/oneLoopLimit`` applies to the task, else nil (any loop: a faster transfer may need a core of its own).
    package var loop: (any EventLoop)? {
        guard let limit = gate.tightestLimit(for: task, direction: direction), limit <= RateGate.oneLoopLimit else {
            return nil
        }
        return gate.loop
    }

    /// The attempt ended: nothing it still waits for asks the gate again.
    package func close() {
        isClosed.store(true, ordering: .relaxed)
    }

    /// Succeeds once the connection may read again: what a response's next body part waits for. Without a wait it is
    /// the loop's completed future, so a transfer allocates nothing per body part.
    func ready(on loop: any EventLoop) -> EventLoopFuture<Void> {
        if isUnlimited || held > 0 { return loop.makeSucceededVoidFuture() }
        return take(on: loop).map { _ in }
    }

    /// Succeeds once the connection may transfer again, with how many bytes it may take (nil: no limit applies).
    /// Until then it does not read, so the waiting happens in the TCP window, not in a buffer.
    func allowance(on loop: any EventLoop) -> EventLoopFuture<Int?> {
        if isUnlimited { return loop.makeSucceededFuture(nil) }
        let bytes = held
        if bytes > 0 { return loop.makeSucceededFuture(bytes) }
        return take(on: loop)
    }

    /// The next grant, once the limiter allows it; the limiter never asks for a wait of more than a second
    /// (`RateLimiter.maximumWait`).
    private func take(on loop: any EventLoop) -> EventLoopFuture<Int?> {
        if isClosed.load(ordering: .relaxed) { return loop.makeSucceededFuture(nil) }
        switch gate.grant(self, on: loop) {
        case .unlimited(let changeCount):
            unlimitedAsOf.store(changeCount, ordering: .relaxed)
            return loop.makeSucceededFuture(nil)
        case .read(let bytes):
            return loop.makeSucceededFuture(bytes)
        case .wait(let woken):
            return woken.flatMap { self.take(on: loop) }
        }
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
