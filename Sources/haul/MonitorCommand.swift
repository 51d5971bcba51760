import ArgumentParser
import DBusKit
import Foundation
import HaulContract

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print a line each time the indicator changes (for panels such as waybar).",
        discussion: """
            Prints the current state first, then one line per change. Keeps running while hauld restarts \
            (printing an offline line meanwhile) and ends with the session bus.
            """
    )

    @Flag(help: "One JSON object per line.")
    var json = false

    @Flag(help: "One line per change in the JSON a waybar custom module with return-type json reads.")
    var waybar = false

    func validate() throws {
        if json && waybar { throw ValidationError("--json and --waybar exclude each other") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let changes = try await client.connection.messages(matching: [
                MatchRule(
                    kind: .signal, sender: HaulBus.name, path: HaulBus.managerPath,
                    interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    arg0: HaulBus.indicatorInterface
                ),
                MatchRule(
                    kind: .signal, sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                    member: "NameOwnerChanged", arg0: HaulBus.name
                ),
            ])
            var status = await currentStatus(client)
            print(status)
            for await message in changes {
                if message.member == "NameOwnerChanged" {
                    let owner = message.body.count == 3 ? message.body[2].stringValue ?? "" : ""
                    if owner.isEmpty {
                        status.online = false
                    } else {
                        status = await currentStatus(client)
                    }
                } else if message.body.count == 3, let changed = message.body[1].stringDictionary {
                    status.online = true
                    status.apply(changed.mapValues(\.unwrapped))
                } else {
                    continue
                }
                print(status)
            }
        }
    }

    /// The indicator as hauld reports it now; offline when hauld cannot be reached (no activation).
    private func currentStatus(_ client: HaulClient) async -> IndicatorStatus {
        do {
            return try await client.indicatorStatus()
        } catch {
            var status = IndicatorStatus()
            status.online = false
            return status
        }
    }

    private func print(_ status: IndicatorStatus) {
        if waybar {
            emit(jsonLine(status.waybar))
        } else if json {
            var object = status.json
            object["time"] = Date().formatted(.iso8601)
            emit(jsonLine(object))
        } else {
            emit("\(Date().formatted(.iso8601.time(includingFractionalSeconds: true))) \(status.line)")
        }
    }
}
