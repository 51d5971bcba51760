/// Keeps transfers under their byte rates by back-pressure: each task under its own limit, all of them
/// together under the global one, in fair shares. A sans-I/O machine: every call carries `now`.
///
/// The caller never sleeps and never buffers. It asks ``permit(for:now:)``: the answer is a number of bytes it may
/// read now, or an instant before which it must not read (it stops reading the socket, and the kernel's TCP window
/// slows the sender). It reports what it read with ``consumed(_:by:now:)``, even when it could not keep a read within
/// its grant: bytes read beyond a grant are a debt, waited out later, so the long-run rate stays exact. A caller may
/// report a whole grant at once, as it takes it, and read it over several reads (hauld's connections do): several
/// connections of one task then never read the same grant twice.
///
/// What it costs: grants are large, ``TokenBucket``'s grant period (250 ms) of a reader's share, so a limited
/// connection wakes a few times a second, reads what its socket's buffer held meanwhile, and stops again. Every wait
/// ends on a grid of ``wakeUpGrid`` (50 ms), so waits that end close together end together, and one timer per
/// limiter wakes them: a limiter's timer fires at most twenty times a second, however many tasks wait.
///
/// How the limits are kept:
/// - A task's own limit is a token bucket: tokens flow in at the limit, at most ``TokenBucket``'s burst period
///   (400 ms) of it pile up while it does not read, and it may read (all of them) once it has a grant's worth.
/// - The global limit is one token bucket shared by all, handed out in rounds (``roundPeriod``, 250 ms). A task that
///   has spent its grant while others wait, or finds the bucket short of a grant, claims a share of the next round
///   and is told to wait for it: at each instant of the rounds' grid, what the bucket holds is split between the
///   tasks that claimed, equally, but that a task with a lower limit of its own gets no more than that limit allows
///   it in a round and leaves the rest to the others. A task that reads less — its own limit is lower, or its server
///   is slower — claims less often and leaves its share to the others: the shares are max-min fair and no rate is
///   left unused. And the tasks of one round wake together, at one firing of the timer, not each at an instant of
///   its own: what a shared limit costs is its wake-ups.
/// - What tasks hold in grants they have not yet read counts against the global bucket's ceiling, so that no burst
///   over all tasks exceeds 400 ms of the global limit either.
/// - No wait is longer than ``maximumWait``: a task waiting for a deadline asks again within a second, so a changed
///   limit applies within a second even to it. A task reading meanwhile sees the change at once.
///
/// hauld's limiter counts time on `ContinuousClock`, and every method its `RateGate` calls has a specialization for
/// it (`@_specialize(exported: true, …)`), as ``TransferQueue``'s do: called from another module, the generic code
/// looks up type metadata at run time at every grant.
package struct RateLimiter<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The answer to "may this task read now?".
    package enum Permit: Equatable, Sendable {
        /// No limit applies to the task: read whatever the buffer takes.
        case unlimited
        /// Read now, at most `maxBytes` (at least 1), and report it with ``RateLimiter/consumed(_:by:now:)``.
        case read(maxBytes: Int)
        /// Read nothing before `deadline`, then ask again.
        case wait(until: Instant)
    }

    /// What the limiter keeps per task.
    private struct Reader: Sendable {
        /// The task's own limit in bytes per second (0: none), as given.
        var limit: UInt64 = 0
        /// The bucket of that limit, if any.
        var own: TokenBucket<Instant>?
        /// Bytes granted from the global bucket and not yet read.
        var allowance: Double = 0
        /// The instant of the round whose share the task claimed, if it waits for one.
        var claim: Instant?

        mutating func setLimit(_ bytesPerSecond: UInt64, now: Instant) {
            limit = bytesPerSecond
            if bytesPerSecond == 0 {
                own = nil
            } else if own != nil {
                own?.changeRate(to: Double(bytesPerSecond), now: now)
            } else {
                own = TokenBucket(rate: Double(bytesPerSecond), now: now)
            }
        }
    }

    /// The longest wait the limiter ever asks for.
    package static var maximumWait: Duration { .seconds(1) }

    /// Every wait ends on this grid, counted from the limiter's creation.
    package static var wakeUpGrid: Duration { .milliseconds(50) }

    /// The global bucket is shared out at the instants of this grid (a multiple of ``wakeUpGrid``, from the same
    /// origin): ``TokenBucket``'s grant period.
    package static var roundPeriod: Duration { .seconds(TokenBucket<Instant>.grantPeriod) }

    /// The most a limit hands out at once after nobody read for a while: ``TokenBucket``'s burst period of it.
    package static var longestBurst: Duration { .seconds(TokenBucket<Instant>.burstPeriod) }

    /// The limit for all tasks together, in bytes per second (0: none), as given.
    package private(set) var globalLimit: UInt64
    /// The bucket of the global limit, if any.
    private var shared: TokenBucket<Instant>?
    private var readers: [UInt32: Reader] = [:]
    /// Where the grid of wake-ups starts.
    private let origin: Instant

    /// Creates a limiter without tasks; `globalLimit` in bytes per second, 0 for none.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package init(globalLimit: UInt64 = 0, now: Instant) {
        self.globalLimit = globalLimit
        origin = now
        if globalLimit > 0 {
            shared = TokenBucket(rate: Double(globalLimit), now: now)
        }
    }

    /// The task's own limit, in bytes per second (0: none), or nil for a task the limiter does not know.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package func limit(of task: UInt32) -> UInt64? {
        readers[task]?.limit
    }

    // MARK: - Tasks

    /// A task starts reading, under its own `limit` (bytes per second, 0: none). Adding a known task sets its limit.
    package mutating func add(_ task: UInt32, limit: UInt64, now: Instant) {
        setLimit(limit, of: task, now: now)
    }

    /// The task stopped reading. What it held of the global bucket and did not read goes back to the others.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func remove(_ task: UInt32, now: Instant) {
        guard let reader = readers.removeValue(forKey: task), var bucket = shared else { return }
        bucket.refill(now: now, ceiling: sharedCeiling(bucket))
        bucket.tokens = min(bucket.tokens + max(reader.allowance, 0), sharedCeiling(bucket))
        shared = bucket
    }

    // MARK: - Limits

    /// The limit for all tasks together is now `bytesPerSecond` (0: none). Claimed shares of the next round are
    /// served at the new rate; what tasks hold is cut to one grant of the new rate.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func setGlobalLimit(_ bytesPerSecond: UInt64, now: Instant) {
        globalLimit = bytesPerSecond
        guard bytesPerSecond > 0 else {
            shared = nil
            for task in readers.keys {
                readers[task]?.allowance = 0
                readers[task]?.claim = nil
            }
            return
        }
        guard var bucket = shared else {
            shared = TokenBucket(rate: Double(bytesPerSecond), now: now)
            return
        }
        bucket.refill(now: now, ceiling: sharedCeiling(bucket))
        bucket.changeRate(to: Double(bytesPerSecond), now: now)
        let grant = TokenBucket<Instant>.quantum(rate: bucket.rate, sharers: readers.count)
        for (task, var reader) in readers {
            reader.allowance = min(reader.allowance, grant)
            readers[task] = reader
        }
        bucket.tokens = min(bucket.tokens, sharedCeiling(bucket))
        shared = bucket
    }

    /// The task's own limit is now `bytesPerSecond` (0: none); what it saved up is cut to 400 ms of the new limit.
    /// A task the limiter does not know is added.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func setLimit(_ bytesPerSecond: UInt64, of task: UInt32, now: Instant) {
        readers[task, default: Reader()].setLimit(bytesPerSecond, now: now)
    }

    // MARK: - Reading

    /// May `task` read now, and how much? A task the limiter does not know is added without a limit of its own.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func permit(for task: UInt32, now: Instant) -> Permit {
        shareRound(now: now)
        var reader = readers[task] ?? Reader()
        let sharers = readers.count + (readers[task] == nil ? 1 : 0)
        defer { readers[task] = reader }
        refill(&reader, now: now)

        // When its own bucket will hold a grant, if it does not now; what it holds, if it does.
        var ownReady: Instant?
        var ownTokens = Double.infinity
        if let own = reader.own {
            let quantum = TokenBucket<Instant>.quantum(rate: own.rate, sharers: 1)
            if own.tokens >= quantum {
                ownTokens = own.tokens
            } else {
                ownReady = now.advanced(by: Self.duration(own.timeUntil(quantum)))
            }
        }
        guard let bucket = shared else {
            if let ownReady { return wait(until: ownReady, now: now) }
            return ownTokens.isFinite ? .read(maxBytes: Self.bytes(ownTokens)) : .unlimited
        }
        // A new grant only when less than half of one is left: reads stay large, and what is left carries over. Never
        // more than a task's own limit lets it read at once.
        var grant = TokenBucket<Instant>.quantum(rate: bucket.rate, sharers: sharers)
        if let own = reader.own { grant = min(grant, own.capacity) }
        // Short of both, it claims its share of the next round now: the two waits overlap rather than add up, which
        // would let its own bucket overflow meanwhile. A task that owes bytes takes what pays its debt as well.
        var round: Instant?
        if reader.allowance < max(grant / 2, 1) {
            round = takeOrClaim(grant - reader.allowance, for: &reader, now: now)
        }
        if let deadline = [ownReady, round].compactMap({ $0 }).max() { return wait(until: deadline, now: now) }
        return .read(maxBytes: Self.bytes(min(reader.allowance, ownTokens)))
    }

    /// `task` read `bytes`. Reading more than granted is allowed: the excess is owed, and waited out.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func consumed(_ bytes: Int, by task: UInt32, now: Instant) {
        guard bytes > 0, var reader = readers[task] else { return }
        refill(&reader, now: now)
        let amount = Double(bytes)
        reader.own?.tokens -= amount
        // What it read beyond its grants is its own debt, paid from its next grants: the others' shares are not cut.
        if shared != nil { reader.allowance -= amount }
        readers[task] = reader
    }

    // MARK: - Helpers

    /// Gives `reader` `bytes` of the global bucket now if nobody waits for a round and the bucket holds them;
    /// otherwise claims its share of the next round. Returns the instant of the round it waits for, or nil when it
    /// may read.
    private mutating func takeOrClaim(_ bytes: Double, for reader: inout Reader, now: Instant) -> Instant? {
        if let claim = reader.claim { return claim }
        guard var bucket = shared else { return nil }
        if nextRound == nil, bucket.tokens >= bytes {
            bucket.tokens -= bytes
            shared = bucket
            reader.allowance += bytes
            return nil
        }
        let round = Self.instant(after: now, onGridOf: Self.roundPeriod, from: origin)
        reader.claim = round
        return round
    }

    /// Once a round's instant has come, splits what the global bucket holds between the tasks that claimed a share
    /// of it: equally, but that a task's own limit caps its share at what that limit lets it read in a round, and
    /// the others share what it leaves.
    private mutating func shareRound(now: Instant) {
        guard let round = nextRound, round <= now, var bucket = shared else { return }
        bucket.refill(now: now, ceiling: sharedCeiling(bucket))
        let roundSeconds = Self.roundPeriod / .seconds(1)
        func cap(_ reader: Reader) -> Double { reader.own.map { max($0.rate * roundSeconds, 1) } ?? .infinity }
        let claimants = readers.filter { $0.value.claim.map { $0 <= now } ?? false }
            .sorted { (cap($0.value), $0.key) < (cap($1.value), $1.key) }
        let budget = max(bucket.tokens, 0)
        var given = 0.0
        for (index, (task, var reader)) in claimants.enumerated() {
            let share = min((budget - given) / Double(claimants.count - index), cap(reader))
            reader.allowance += share
            reader.claim = nil
            given += share
            readers[task] = reader
        }
        bucket.tokens -= given
        shared = bucket
    }

    /// The earliest round a task claimed a share of, if any. A scan of the tasks, as ``sharedCeiling(_:)`` is at every
    /// grant: they are the few transferring at once.
    private var nextRound: Instant? { readers.values.compactMap(\.claim).min() }

    /// Brings the buckets up to `now`.
    private mutating func refill(_ reader: inout Reader, now: Instant) {
        reader.own?.refill(now: now)
        if var bucket = shared {
            bucket.refill(now: now, ceiling: sharedCeiling(bucket))
            shared = bucket
        }
    }

    /// The global bucket's ceiling: its capacity less what tasks already hold in grants.
    private func sharedCeiling(_ bucket: TokenBucket<Instant>) -> Double {
        max(bucket.capacity - readers.values.reduce(0) { $0 + max($1.allowance, 0) }, 0)
    }

    /// The first instant of the grid of `period` from `origin` after `now`.
    private static func instant(after now: Instant, onGridOf period: Duration, from origin: Instant) -> Instant {
        let grid = nanoseconds(period)
        let steps = nanoseconds(origin.duration(to: now)) / grid + 1
        return origin.advanced(by: .nanoseconds(max(steps, 1) * grid))
    }

    /// A wait until `deadline`, moved on to the next instant of the grid (so that waits ending close together end
    /// together), but never longer than ``maximumWait``.
    private func wait(until deadline: Instant, now: Instant) -> Permit {
        let latest = now.advanced(by: Self.maximumWait)
        let grid = Self.nanoseconds(Self.wakeUpGrid)
        let steps = (Self.nanoseconds(origin.duration(to: min(deadline, latest))) + grid - 1) / grid
        var aligned = origin.advanced(by: .nanoseconds(steps * grid))
        if aligned > latest { aligned = aligned.advanced(by: .nanoseconds(-grid)) }
        // Only a `now` before the limiter's creation could put the grid behind it.
        return .wait(until: aligned > now ? aligned : min(deadline, latest))
    }

    /// `duration` in whole nanoseconds, rounded down.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// `seconds` as whole microseconds, rounded up past it so that a caller woken then finds the tokens there. Capped
    /// at a year, far beyond any wait a reader sees, so that no debt can overflow a deadline.
    private static func duration(_ seconds: Double) -> Duration {
        guard seconds > 0 else { return .microseconds(1) }
        return .microseconds(Int64(min(seconds, 31_536_000) * 1_000_000) + 1)
    }

    /// A grant in whole bytes, at least one.
    private static func bytes(_ amount: Double) -> Int {
        Int(min(max(amount, 1), Double(Int32.max)))
    }
}
