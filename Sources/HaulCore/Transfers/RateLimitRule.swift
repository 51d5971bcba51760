/// What a rate limit may be, in bytes per second: 0 (none) or at least ``minimum``.
///
/// A connection under a limit reads a socket buffer's worth at a time (up to 64 KiB) and then waits until the limit
/// has caught up; a wait longer than the read timeout (30 s) would fail the transfer as a stall. At 4 KiB/s the
/// longest wait is 16 s.
package enum RateLimitRule {
    package static let minimum: UInt64 = 4096

    package static func isValid(_ bytesPerSecond: UInt64) -> Bool {
        bytesPerSecond == 0 || bytesPerSecond >= minimum
    }

    package static let requirement = "0 (no limit) or at least \(minimum) bytes per second"
}
