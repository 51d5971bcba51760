import DBusKit
import Foundation
import HaulContract
import HaulTestSupport

/// Rate limits on the wire: one task at its own limit, then four sharing the Manager's `DownloadRateLimit`; and
/// hauld's CPU per GiB at a limit against the same download unlimited.
extension Bench {
    /// One task's `rate-limit`.
    static let taskLimit = 5 << 20
    /// The Manager's `DownloadRateLimit`, shared by `sharingTasks`.
    static let globalLimit = 4 << 20
    static let sharingTasks = 4
    /// The steady part of a limited run, in seconds from the `Download` calls: the first seconds hold the limiter's
    /// initial bucket, TCP's ramp and the kernel's receive buffer filling before back-pressure reaches the server.
    static let steadyFrom = 5.0
    static let steadyTo = 25.0
    /// The window for ±5 %.
    static let windowSeconds = 10.0

    func rateLimits() async throws -> RateLimitFigures {
        let url = server.url(Workspace.rateLimitedFile, throttled: false)
        guard let port = URL(string: url)?.port else { throw TestSupportError("no port in \(url)") }
        let bytes = Workspace.rateLimitedSize
        let perGiB = Double(1 << 30) / Double(bytes)

        var unlimited: [DownloadCost] = []
        for round in 0..<settings.rounds {
            let (cost, _) = try await downloadToTheEnd(url, name: "unlimited-\(round).bin", limit: nil, port: port)
            unlimited.append(cost)
        }
        // One task at its own limit, to the end (the file lasts 30 s at the limit), so that its CPU counts the same
        // work as the unlimited rounds: open, preallocate, receive, sync, rename.
        let (limited, record) = try await downloadToTheEnd(
            url, name: "limited.bin", limit: Self.taskLimit, port: port
        )
        guard let single = record else { throw TestSupportError("the limited run recorded no wire") }

        // Four tasks under the global limit, stopped once the steady part is recorded.
        try await client.setManager(.downloadRateLimit, .uint64(UInt64(Self.globalLimit)))
        let sharedStart = ContinuousClock.now
        let tasks = try await withThrowingTaskGroup(of: ObjectPath.self) { group in
            for index in 0..<Self.sharingTasks {
                group.addTask {
                    try await client.download(
                        url, to: workspace.hauldFile("shared-\(index).bin"), options: [.connections: .uint32(1)]
                    )
                }
            }
            return try await group.reduce(into: [ObjectPath]()) { $0.append($1) }
        }
        let shared = try await WireCounter(port: port, start: sharedStart).record(until: Self.steadyTo)
        try await client.managerCall(.cancelAll)
        // A task that finished before the cancel (a limit not held) ends without error.
        _ = try await client.completions(of: tasks, allowing: [nil, .cancelled])
        try await client.forget(tasks)
        try await client.setManager(.downloadRateLimit, .uint64(0))
        try workspace.clearDownloads()

        return RateLimitFigures(
            single: LimitedRunFigures(record: single, limit: Self.taskLimit, tasks: 1),
            shared: LimitedRunFigures(record: shared, limit: Self.globalLimit, tasks: Self.sharingTasks),
            bytes: bytes,
            unlimitedCPUSecondsPerGiB: unlimited.map { $0.cpuSeconds * perGiB },
            limitedCPUSecondsPerGiB: limited.cpuSeconds * perGiB,
            unlimitedWakeupsPerGiB: unlimited.map { Double($0.wakeups) * perGiB },
            limitedWakeupsPerGiB: Double(limited.wakeups) * perGiB
        )
    }

    /// What one download cost hauld, from the `Download` call to its completion.
    private struct DownloadCost {
        let cpuSeconds: Double
        /// Context switches of hauld's threads.
        let wakeups: Int
    }

    /// hauld's cost of one download over one connection and, when it is limited, the wire until the end of the
    /// steady part.
    private func downloadToTheEnd(
        _ url: String, name: String, limit: Int?, port: Int
    ) async throws -> (DownloadCost, WireRecord?) {
        var options: [DownloadOption: DBusValue] = [.connections: .uint32(1)]
        if let limit { options[.rateLimit] = .uint64(UInt64(limit)) }
        let before = try ProcessSample(pid: pid)
        let start = ContinuousClock.now
        let task = try await client.download(url, to: workspace.hauldFile(name), options: options)
        var record: WireRecord?
        if limit != nil { record = try await WireCounter(port: port, start: start).record(until: Self.steadyTo) }
        _ = try await client.completions(of: [task], timeout: .seconds(120))
        let after = try ProcessSample(pid: pid)
        try await client.forget([task])
        try workspace.clearDownloads()
        let cost = DownloadCost(cpuSeconds: after.cpuTime(since: before).seconds, wakeups: after.wakeups(since: before))
        return (cost, record)
    }
}

/// One limited run's rates on the wire over its steady part, in bytes per second.
struct LimitedRunFigures: Codable, Sendable {
    var limit: Int
    var tasks: Int
    var fromSeconds: Double
    var toSeconds: Double
    /// All connections together over the steady part.
    var rate: Double
    /// The 10 s window within the steady part furthest from the limit.
    var worstWindowRate: Double
    /// Each connection over the steady part (one per task).
    var connectionRates: [Double]
    /// Every sample's total bytes of the connections listed so far (idle pooled ones too), for plotting: seconds
    /// since the `Download` calls, bytes.
    var totals: [[Double]]

    init(record: WireRecord, limit: Int, tasks: Int) {
        self.limit = limit
        self.tasks = tasks
        fromSeconds = Bench.steadyFrom
        toSeconds = Bench.steadyTo
        rate = record.rate(from: fromSeconds, to: toSeconds)
        worstWindowRate = record.worstWindowRate(
            from: fromSeconds, to: toSeconds, length: Bench.windowSeconds, target: Double(limit)
        )
        connectionRates = record.connectionRates(from: fromSeconds, to: toSeconds)
        totals = record.samples.map { [$0.seconds, Double($0.bytes.values.reduce(0, +))] }
    }

    /// How far a rate is from the limit, as a fraction of it (+0.02: 2 % over).
    func deviation(_ rate: Double) -> Double { rate / Double(limit) - 1 }

    /// Each connection's deviation from an equal share of the limit.
    var shareDeviations: [Double] {
        connectionRates.map { $0 / (Double(limit) / Double(max(tasks, 1))) - 1 }
    }
}

struct RateLimitFigures: Codable, Sendable {
    var single: LimitedRunFigures
    var shared: LimitedRunFigures
    /// The size of the file both CPU figures download.
    var bytes: Int
    /// hauld's user + system CPU per GiB, each unlimited round.
    var unlimitedCPUSecondsPerGiB: [Double]
    /// The same for the one task at its limit.
    var limitedCPUSecondsPerGiB: Double
    /// hauld's wake-ups (context switches of its threads) per GiB, each unlimited round, and at the limit.
    var unlimitedWakeupsPerGiB: [Double]
    var limitedWakeupsPerGiB: Double

    var cpuRatio: Double { limitedCPUSecondsPerGiB / max(Statistics.median(unlimitedCPUSecondsPerGiB), 1e-9) }
}
