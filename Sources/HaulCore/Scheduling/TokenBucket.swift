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

    /// The most that may pile up while nobody reads: a quarter of a second's worth, the largest burst allowed.
    var capacity: Double { max(rate / 4, Self.quantum(rate: rate, sharers: 1)) }

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

    /// The bytes one grant carries at `rate` shared by `sharers` readers: a sixteenth of a second of each one's
    /// share, so that a round of grants to every reader spans a sixteenth of a second whatever their number. Never
    /// above 64 KiB (one socket read rarely brings more), never below 512 bytes (smaller reads cost more than they
    /// move) unless a quarter of a second of the rate is less than that, and never below one byte.
    static func quantum(rate: Double, sharers: Int) -> Double {
        let share = rate / 16 / Double(max(sharers, 1))
        let floor = min(512, rate / 4)
        return max(min(max(share, floor), 65_536), 1)
    }
}
