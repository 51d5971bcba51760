import ArgumentParser

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the network-activity indicator (visibility, state, count, settings), the limits and the network."
    )

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let status = try await client.indicatorStatus()
            let manager = try await client.managerSnapshot()
            let limits = ManagerLimits(manager)
            let conditions = SystemConditions(manager)
            emit(
                json
                    ? jsonLine(status.json.merging(limits.json) { $1 }.merging(conditions.json) { $1 })
                    : [status.human, limits.human, conditions.human].joined(separator: "\n")
            )
        }
    }
}
