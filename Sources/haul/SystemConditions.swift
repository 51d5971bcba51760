import HaulContract

/// What hauld knows of the machine, as `haul status` shows it: the network (NetworkManager), metered, power saver
/// (power-profiles-daemon), and whether it keeps the machine from sleeping while foreground tasks run.
struct SystemConditions {
    let snapshot: ManagerSnapshot

    init(_ snapshot: ManagerSnapshot) {
        self.snapshot = snapshot
    }

    var human: String {
        let network = snapshot.networkState == .unknown ? "unknown (no NetworkManager)" : snapshot.networkState.rawValue
        let sleep = snapshot.inhibitSleep ? "kept away while foreground tasks run" : "allowed (InhibitSleep off)"
        return """
            Network:    \(network)\(snapshot.metered ? ", metered" : ""); power saver \(snapshot.powerSaver ? "on" : "off")
            Sleep:      \(sleep)
            """
    }

    var json: [String: Any] {
        [
            "network_state": snapshot.networkState.rawValue, "metered": snapshot.metered,
            "power_saver": snapshot.powerSaver, "inhibit_sleep": snapshot.inhibitSleep,
        ]
    }
}
