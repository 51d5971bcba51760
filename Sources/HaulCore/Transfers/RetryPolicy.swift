package import FoundationEssentials
import Glibc

/// Exponential back-off between the attempts of a task: about 1 s, doubling, capped, `Retry-After` honoured
/// (docs/behaviour.md, "Retries").
///
/// The policy is deterministic: no jitter. Haul's tasks fail at unrelated instants and against many servers, so
/// there is no herd to spread out, and a deterministic delay is what a test — and a person reading the log — expects.
package struct RetryPolicy: Sendable, Equatable {
    /// The delay after the first failed attempt.
    package var initialDelay: Duration
    /// What each further failure multiplies the delay by.
    package var multiplier: Double
    /// The longest back-off of the policy's own.
    package var maximumDelay: Duration
    /// The longest wait a server's `Retry-After` can impose: a server asking for a day is not obeyed to the letter,
    /// since the task would look dead, but it still gets an hour of quiet.
    package var maximumRetryAfter: Duration

    /// Creates a policy; the defaults are the daemon's (1 s, ×2, at most 60 s; `Retry-After` up to an hour).
    package init(
        initialDelay: Duration = .seconds(1),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(60),
        maximumRetryAfter: Duration = .seconds(3600)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// How long to wait after attempt number `attempt` (1 for the first) failed before starting the next one.
    ///
    /// The back-off is `initialDelay × multiplier^(attempt − 1)`, capped at ``maximumDelay``. A `retryAfter` from the
    /// server (capped at ``maximumRetryAfter``) is a floor: the next attempt never starts sooner than the server
    /// asked, nor sooner than the back-off would. Never negative, whatever the fields hold.
    package func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        let cap = max(maximumDelay, .zero)
        let initial = min(max(initialDelay, .zero), cap)
        // Computed in seconds as a Double, and clamped before going back to a Duration, so that a large attempt count
        // or a strange multiplier saturates at the cap instead of overflowing.
        let exponent = Double(max(attempt, 1) - 1)
        let seconds = (initial / .seconds(1)) * pow(multiplier, exponent)
        let backOff: Duration =
            if seconds.isNaN || seconds >= cap / .seconds(1) {
                cap
            } else {
                seconds > 0 ? .seconds(seconds) : .zero
            }
        guard let retryAfter else { return backOff }
        let requested = min(max(retryAfter, .zero), max(maximumRetryAfter, .zero))
        return max(backOff, requested)
    }

    /// The wait a `Retry-After` header value asks for, as of `now`: either delay-seconds (`120`) or an HTTP-date
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`; the obsolete RFC 850 and asctime forms are accepted too, as RFC 9110 asks of
    /// recipients). A date in the past asks for no wait (zero). Anything else — including a number too large for an
    /// `Int64` — is garbage and gives nil.
    package static func parseRetryAfter(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ (48...57).contains($0) }) {
            return Int64(trimmed).map { .seconds($0) }
        }
        let nowSeconds = now.timeIntervalSince1970
        // The year to within a day (mean Gregorian years): enough to place an RFC 850 two-digit year.
        let currentYear = 1970 + Int((nowSeconds / 31_556_952).rounded(.down))
        guard let date = HTTPDate.parse(trimmed, currentYear: currentYear) else { return nil }
        let interval = Double(date) - nowSeconds
        return interval > 0 ? .seconds(interval) : .zero
    }
}
