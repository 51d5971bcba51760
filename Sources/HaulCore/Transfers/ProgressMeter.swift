/// Coalesces one task's progress publications and measures its rate, with no clock of its own.
///
/// Publications: ``record(bytes:now:)`` says "publish now" at most once per ``interval`` (the contract: about ten
/// `PropertiesChanged` a second, whatever the byte rate). What it holds back is still owed: ``trailingDeadline``
/// says when it may go out if nothing else arrives, and ``flush(now:)`` settles it at once (a state change
/// publishes progress with it).
///
/// Rate: the bytes that arrived during the last ``rateWindow`` (1 s by default), divided by that window — or by the
/// time since measuring began, during the first window, so a new transfer's rate is not underestimated. It is
/// exactly 0 once a whole window has passed without bytes. Totals are sampled at most every tenth of a window, so the
/// memory used does not grow with the record rate.
package struct ProgressMeter<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    private struct Sample: Sendable {
        var instant: Instant
        var total: UInt64
    }

    /// The shortest time between two publications.
    package let interval: Duration
    /// How far back the rate looks.
    package let rateWindow: Duration
    /// The latest total recorded.
    package private(set) var totalBytes: UInt64 = 0

    private var lastPublication: Instant?
    private var hasUnpublished = false
    /// Oldest first; all but the last are at least `rateWindow / 10` apart, and at most one is older than the window.
    private var samples: [Sample] = []

    /// Creates a meter that has recorded nothing.
    package init(interval: Duration = .milliseconds(100), rateWindow: Duration = .seconds(1)) {
        self.interval = max(interval, .zero)
        // A window of zero would divide by zero; a nanosecond is as good as no window at all.
        self.rateWindow = max(rateWindow, .nanoseconds(1))
    }

    /// Records that `total` bytes have now been moved, and says whether to publish progress now.
    ///
    /// Record the starting total (the bytes already on disk) when a transfer starts, so the rate counts from there.
    /// A total smaller than the last one (the transfer restarted from zero) starts the rate afresh.
    package mutating func record(bytes total: UInt64, now: Instant) -> Bool {
        addSample(total, now: now)
        totalBytes = total
        if let lastPublication, lastPublication.advanced(by: interval) > now {
            hasUnpublished = true
            return false
        }
        lastPublication = now
        hasUnpublished = false
        return true
    }

    /// Notes that progress was published now (with a state change, or when ``trailingDeadline`` passed), and says
    /// whether a recorded total had been held back — in which case the owner should include it.
    @discardableResult
    package mutating func flush(now: Instant) -> Bool {
        let owed = hasUnpublished
        lastPublication = now
        hasUnpublished = false
        return owed
    }

    /// When a held-back total may be published if no further record comes (arm a timer, then ``flush(now:)``), or
    /// nil when everything recorded has been published.
    package var trailingDeadline: Instant? {
        guard hasUnpublished, let lastPublication else { return nil }
        return lastPublication.advanced(by: interval)
    }

    /// Bytes per second over the last ``rateWindow``, as of `now`.
    package func rate(now: Instant) -> UInt64 {
        guard let first = samples.first, let latest = samples.last else { return 0 }
        let horizon = now.advanced(by: .zero - rateWindow)
        // The total at the horizon is that of the last sample at or before it; with none, measuring began inside the
        // window and counts from its first sample.
        let base = samples.last(where: { $0.instant <= horizon }) ?? first
        let span = (base.instant <= horizon ? horizon : base.instant).duration(to: now)
        guard span > .zero, latest.total > base.total else { return 0 }
        let perSecond = Double(latest.total - base.total) / (span / .seconds(1))
        return perSecond < Double(UInt64.max) ? UInt64(perSecond) : .max
    }

    /// `done / expected`, clamped into 0…1; 0 when the expected size is unknown (-1) or zero, as NSProgress reports
    /// for a total of zero.
    package static func fraction(done: UInt64, expected: Int64) -> Double {
        guard expected > 0 else { return 0 }
        return min(Double(done) / Double(expected), 1)
    }

    private mutating func addSample(_ total: UInt64, now: Instant) {
        if total < totalBytes {
            samples.removeAll(keepingCapacity: true)
        }
        let spacing = rateWindow / 10
        if samples.count >= 2, samples[samples.count - 2].instant.advanced(by: spacing) > now {
            // Too close to the sample before: move the latest one forward rather than add another.
            samples[samples.count - 1] = Sample(instant: now, total: total)
        } else {
            samples.append(Sample(instant: now, total: total))
        }
        // Only the newest sample at or before the horizon is ever read; older ones go.
        let horizon = now.advanced(by: .zero - rateWindow)
        if let newestOld = samples.lastIndex(where: { $0.instant <= horizon }), newestOld > 0 {
            samples.removeFirst(newestOld)
        }
    }
}
