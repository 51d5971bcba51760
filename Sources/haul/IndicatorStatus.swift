import DBusKit
import Foundation
import HaulContract

/// The indicator's properties as the CLI shows them.
struct IndicatorStatus: Equatable {
    var snapshot: IndicatorSnapshot
    /// False while hauld is not on the bus (only `monitor` shows that).
    var online = true

    init(_ properties: [String: DBusValue] = [:]) {
        snapshot = IndicatorSnapshot(properties: properties)
    }

    var visible: Bool { snapshot.visible }
    var state: String { snapshot.state.rawValue }
    var activityCount: UInt32 { snapshot.activityCount }
    var enabled: Bool { snapshot.enabled }
    var activationDelay: Double { snapshot.activationDelay }
    var completionDelay: Double { snapshot.completionDelay }

    /// Merges the values of a GetAll reply or a PropertiesChanged signal.
    mutating func apply(_ properties: [String: DBusValue]) {
        snapshot.apply(properties)
    }

    var human: String {
        """
        Indicator:  \(visible ? "visible" : "hidden") (\(state))
        Activity:   \(activityCount) (running transfers + manual holds)
        Enabled:    \(enabled ? "yes" : "no")
        Delays:     activation \(Self.seconds(activationDelay)), completion \(Self.seconds(completionDelay))
        """
    }

    var line: String {
        guard online else { return "hauld offline" }
        return "visible=\(visible ? "yes" : "no") state=\(state) count=\(activityCount) enabled=\(enabled ? "yes" : "no")"
    }

    var json: [String: Any] {
        [
            "online": online, "visible": visible, "state": state, "activity_count": activityCount,
            "enabled": enabled, "activation_delay": activationDelay, "completion_delay": completionDelay,
        ]
    }

    /// What a waybar `custom` module with `"return-type": "json"` reads: empty text hides the module.
    var waybar: [String: Any] {
        let alt = !online ? "offline" : !enabled ? "disabled" : visible ? "busy" : "idle"
        let activity = activityCount == 1 ? "1 transfer or hold" : "\(activityCount) transfers or holds"
        let tooltip = online ? "Haul: \(activity) (\(state))" : "Haul: hauld is not running"
        return ["text": visible && online ? "⇅ \(activityCount)" : "", "alt": alt, "class": alt, "tooltip": tooltip]
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
}

/// One JSON object on one line, keys sorted so output is stable.
func jsonLine(_ object: [String: Any]) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}

/// Writes a line to stdout at once (panels read line by line through a pipe).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
