import ArgumentParser
import DBusKit
import HaulContract

struct IndicatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "indicator",
        abstract: "Change the indicator's settings (kept across restarts), then show its status.",
        discussion: "Delays are seconds from \(IndicatorCommand.delays)."
    )

    @Flag(name: .customLong("enable"), help: "Enable the indicator.")
    var enable = false

    @Flag(name: .customLong("disable"), help: "Disable the indicator (hides it at once).")
    var disable = false

    @Option(help: ArgumentHelp("Seconds activity must last before the indicator shows.", valueName: "S"))
    var activationDelay: Double?

    @Option(help: ArgumentHelp("Seconds the indicator stays after activity ends.", valueName: "S"))
    var completionDelay: Double?

    @Flag(help: "Print the resulting status as one JSON object.")
    var json = false

    func validate() throws {
        if enable && disable { throw ValidationError("--enable and --disable exclude each other") }
        for (name, value) in [("--activation-delay", activationDelay), ("--completion-delay", completionDelay)] {
            if let value, !IndicatorDefaults.delayRange.contains(value) {
                throw ValidationError("\(name) must be a number of seconds from \(Self.delays)")
            }
        }
    }

    /// "0 to 60"
    private static var delays: String {
        "\(Int(IndicatorDefaults.delayRange.lowerBound)) to \(Int(IndicatorDefaults.delayRange.upperBound))"
    }

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            if enable || disable { try await client.setIndicator(.enabled, .boolean(enable)) }
            if let activationDelay { try await client.setIndicator(.activationDelay, .double(activationDelay)) }
            if let completionDelay { try await client.setIndicator(.completionDelay, .double(completionDelay)) }
            let status = try await client.indicatorStatus()
            emit(json ? jsonLine(status.json) : status.human)
        }
    }
}
