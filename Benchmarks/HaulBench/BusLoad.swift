import DBusKit

/// Counts what hauld put on the bus during a window.
enum BusLoad {
    static func measure(
        _ signals: [BusSignal], scenario: String, tasks: Int, from start: ContinuousClock.Instant,
        to end: ContinuousClock.Instant
    ) -> BusLoadFigures {
        let seconds = max(start.duration(to: end).seconds, 1e-9)
        var perTask: [ObjectPath: [ContinuousClock.Instant]] = [:]
        for signal in signals where signal.isTaskProgress { perTask[signal.path, default: []].append(signal.instant) }
        let progress = perTask.values.reduce(0) { $0 + $1.count }
        return BusLoadFigures(
            scenario: scenario, tasks: tasks, seconds: seconds, signals: signals.count,
            signalsPerSecond: Double(signals.count) / seconds, taskPropertySignals: progress,
            taskPropertySignalsPerTaskPerSecond: Double(progress) / Double(max(tasks, 1)) / seconds,
            maxTaskPropertySignalsInOneSecond: perTask.values.map(maxInOneSecond).max() ?? 0
        )
    }

    /// The most instants (in arrival order) that fit in any window one second long.
    static func maxInOneSecond(_ instants: [ContinuousClock.Instant]) -> Int {
        var best = 0
        var first = 0
        for last in instants.indices {
            while instants[first].duration(to: instants[last]) >= .seconds(1) { first += 1 }
            best = max(best, last - first + 1)
        }
        return best
    }
}
