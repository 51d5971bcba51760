import HaulCore

/// How long a rate-limited transfer must take, for the tests that time one on the wire. A limit can only be kept too
/// well on a loaded machine, never broken: those tests check this lower bound, and only a generous upper one.
package enum RateLimitTiming {
    /// The least time `bytes` can take at `rate` bytes per second: a token bucket may hand out its longest burst
    /// (`RateLimiter.longestBurst`) at once, and the last read (at most 64 KiB, NIO's largest) may overdraw it, a debt
    /// never waited out.
    package static func least(_ bytes: Int, at rate: Int) -> Double {
        Double(bytes - 64 * 1024) / Double(rate) - RateLimiter<ContinuousClock.Instant>.longestBurst / .seconds(1)
    }

    /// The seconds from `start` until now.
    package static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}
