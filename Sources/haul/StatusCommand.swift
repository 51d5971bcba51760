import ArgumentParser

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the network-activity indicator (visibility, state, count, settings) and the bandwidth limits."
    )

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let status = try await client.indicatorStatus()
            let limits = ManagerLimits(try await client.managerSnapshot())
            emit(json ? jsonLine(status.json.merging(limits.json) { $1 }) : status.human + "\n" + limits.human)
        }
    }
}
