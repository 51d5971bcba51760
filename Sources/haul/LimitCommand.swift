import ArgumentParser
import DBusKit
import HaulContract

struct LimitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limit", abstract: "Show or set hauld's bandwidth limits for all transfers together.",
        discussion: """
            RATE is in bytes per second, as curl's --limit-rate: 200K, 1.5M, 1G (1024-based); 0 removes the limit. \
            A limit is 0 or at least 4K. A task's own limit (`haul get --limit-rate`) applies within these. \
            --max-running sets how many tasks transfer at once (0: no limit); the others wait in the queue. \
            Without options, prints the limits.
            """
    )

    @Option(help: ArgumentHelp("The limit for all downloads together.", valueName: "RATE"))
    var download: RateArgument?

    @Option(help: ArgumentHelp("The limit for all uploads together.", valueName: "RATE"))
    var upload: RateArgument?

    @Option(help: ArgumentHelp("How many tasks transfer at once (0: no limit).", valueName: "N"))
    var maxRunning: UInt32?

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            if let download { try await client.setManager(.downloadRateLimit, .uint64(download.bytesPerSecond)) }
            if let upload { try await client.setManager(.uploadRateLimit, .uint64(upload.bytesPerSecond)) }
            if let maxRunning { try await client.setManager(.maxRunningTasks, .uint32(maxRunning)) }
            let limits = ManagerLimits(try await client.managerSnapshot())
            emit(json ? jsonLine(limits.json) : limits.human)
        }
    }
}

/// The Manager's limits as the CLI shows them (`haul limit`, `haul status`).
struct ManagerLimits {
    let snapshot: ManagerSnapshot

    init(_ snapshot: ManagerSnapshot) {
        self.snapshot = snapshot
    }

    var human: String {
        let download = RateArgument(bytesPerSecond: snapshot.downloadRateLimit)
        let upload = RateArgument(bytesPerSecond: snapshot.uploadRateLimit)
        let running = snapshot.maxRunningTasks == 0 ? "no limit" : "\(snapshot.maxRunningTasks)"
        return "Limits:     download \(download), upload \(upload), running tasks \(running)"
    }

    var json: [String: Any] {
        [
            "download_rate_limit": snapshot.downloadRateLimit, "upload_rate_limit": snapshot.uploadRateLimit,
            "max_running_tasks": snapshot.maxRunningTasks,
        ]
    }
}
