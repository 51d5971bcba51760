import DBusKit
import Foundation
import HaulContract

/// Suspend/Resume round trips, and the bus load, while `transfers` throttled downloads are in flight.
extension Bench {
    func controlLatency() async throws -> (ControlFigures, BusLoadFigures) {
        let url = server.url(Workspace.throttledFile, throttled: true)
        let count = settings.transfers
        let tasks = try await startDownloads(
            (0..<count).map { Download(url: url, path: workspace.hauldFile("throttled-\($0).bin")) }
        )
        // Let every connection get going, then count a steady five seconds.
        try await Task.sleep(for: .seconds(2))
        let windowStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(5))
        let windowEnd = ContinuousClock.now
        let load = BusLoad.measure(
            client.signals.signals(from: windowStart, to: windowEnd),
            scenario: "\(count) in flight, \(throttleRate >> 20) MiB/s per connection", tasks: count,
            from: windowStart, to: windowEnd
        )

        var suspends: [Double] = []
        var resumes: [Double] = []
        for sample in 0..<settings.controlSamples {
            // Spread over the tasks, a different one each time.
            let task = tasks[(sample * 37) % tasks.count]
            suspends.append(try await timed { try await client.calls.call(.suspend, on: task) })
            try await Task.sleep(for: .milliseconds(10))
            resumes.append(try await timed { try await client.calls.call(.resume, on: task) })
            try await Task.sleep(for: .milliseconds(10))
        }

        try await client.calls.call(.cancelAll)
        _ = try await client.completions(of: tasks, allowing: [.cancelled])
        try await client.forget(tasks)
        try workspace.clearDownloads()
        let figures = ControlFigures(tasksInFlight: count, suspend: Latencies(suspends), resume: Latencies(resumes))
        return (figures, load)
    }

    /// Milliseconds `body` took.
    private func timed(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return start.duration(to: .now).milliseconds
    }
}
