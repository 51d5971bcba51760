/// Summaries of repeated measurements.
enum Statistics {
    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    /// The nearest-rank percentile (`fraction` in 0…1) of `values`; 0 for none.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Double { seconds * 1000 }
}
