/// Bytes allowed at a steady rate: tokens flow in at `rate` per second up to a ceiling, and reading spends them.
///
/// Spending may take the bucket below zero — a reader that read more than it was granted owes the difference, and
/// waits it out — so the long-run rate is exact whatever the reads look like.
struct TokenBucket<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Bytes per second.
    private(set) var rate: Double
    /// Bytes that may be read now; negative when owed.
    var tokens: Double
    private var updated: Instant

    init(rate: Double, now: Instant) {
        self.rate = rate
        tokens = 0
        updated = now
    }

    /// The most that may pile up while nobody reads: ``burstPeriod``'s worth, the largest burst allowed.
    var capacity: Double { max(rate * Self.burstPeriod, Self.quantum(rate: rate, sharers: 1)) }

    /// Adds what flowed in since the last refill, up to `ceiling` (by default ``capacity``); tokens already above
    /// the ceiling are left alone.
    mutating func refill(now: Instant, ceiling: Double? = nil) {
        let elapsed = max(updated.duration(to: now) / .seconds(1), 0)
        updated = max(updated, now)
        let limit = ceiling ?? capacity
        if tokens < limit {
            tokens = min(tokens + rate * elapsed, limit)
        }
    }

    /// A new rate from now on. What piled up is cut to the new capacity; a debt is kept (the bytes were read).
    mutating func changeRate(to newRate: Double, now: Instant) {
        refill(now: now)
        rate = newRate
        tokens = min(tokens, capacity)
    }

    /// How long until the bucket holds `amount` tokens, never less than zero.
    func timeUntil(_ amount: Double) -> Double {
        max(amount - tokens, 0) / rate
    }

    /// The time one grant covers: a reader reads what the limit allows it for the next 250 ms in one go, and the
    /// socket's buffer holds the rest meanwhile. Few grants a second keep a limited transfer's wake-ups near curl's.
    static var grantPeriod: Double { 0.25 }

    /// The longest burst, 400 ms of the rate: room for a grant (250 ms), the wait that ends on `RateLimiter`'s 50 ms
    /// grid after it, and a timer that fires late, before tokens would overflow the bucket and the rate be lost; in
    /// the global bucket, room too for what tasks still hold of the last round, which counts against it (at 350 ms,
    /// shared limits lost up to 15 % in the fairness tests). At most 4 % of any 10 s window.
    static var burstPeriod: Double { 0.4 }

    /// The bytes one grant carries at `rate` shared by `sharers` readers: a ``grantPeriod`` of each one's share, so
    /// that a round of grants to every reader spans 250 ms whatever their number. Never below 512 bytes
    /// (smaller reads cost more than they move) unless a quarter of a second of the rate is less than that, and never
    /// below one byte; never above ``capacity``.
    static func quantum(rate: Double, sharers: Int) -> Double {
        let share = rate * grantPeriod / Double(max(sharers, 1))
        let floor = min(512, rate / 4)
        return max(max(share, floor), 1)
    }
}
