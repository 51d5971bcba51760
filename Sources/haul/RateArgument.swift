import ArgumentParser

/// A rate in bytes per second, spelt as curl's `--limit-rate` takes it: a number, with a fraction if wanted, and
/// an optional suffix k, M, G, T or P in either case, 1024-based (`200K`, `1.5m`, `1G`). 0 means no limit.
struct RateArgument: ExpressibleByArgument, Equatable {
    let bytesPerSecond: UInt64

    private static let suffixes: [Character: Int] = ["k": 1, "m": 2, "g": 3, "t": 4, "p": 5]

    init(bytesPerSecond: UInt64) {
        self.bytesPerSecond = bytesPerSecond
    }

    init?(argument: String) {
        var number = Substring(argument)
        var multiplier: UInt64 = 1
        if let last = number.last, let power = Self.suffixes[Character(last.lowercased())] {
            number = number.dropLast()
            for _ in 0..<power { multiplier *= 1024 }
        }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !(whole.isEmpty && fraction.isEmpty), fraction.count <= 9,
              (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber }),
              let wholeValue = whole.isEmpty ? 0 : UInt64(whole)
        else { return nil }
        let (scaled, overflow) = wholeValue.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        // The fraction in billionths, times the multiplier: at most 1024^5 × 10^9, well within 64 bits.
        let billionths = UInt64(fraction + String(repeating: "0", count: 9 - fraction.count)) ?? 0
        let extra = UInt64((Double(billionths) * Double(multiplier) / 1e9).rounded())
        let (total, carry) = scaled.addingReportingOverflow(extra)
        guard !carry else { return nil }
        bytesPerSecond = total
    }
}

extension RateArgument: CustomStringConvertible {
    /// `none`, or the rate as `haul` shows rates (`1.5 MiB/s`).
    var description: String { bytesPerSecond == 0 ? "none" : "\(Bytes.format(bytesPerSecond))/s" }
}
