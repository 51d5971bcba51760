package import HaulContract

/// Why a queued task waits, in the words a panel shows (a KDE job's message, the tray's tooltip).
package enum WaitingReason {
    /// The sentence for a queued task's `WaitingFor`; nil for a task that does not wait, or a reason this hauld does
    /// not know.
    package static func sentence(for task: TaskSnapshot) -> String? {
        guard task.state == .queued, let reason = WaitingForName(rawValue: task.waitingFor) else { return nil }
        return switch reason {
        case .sleep: "Waiting for the computer to wake up"
        case .network: "Waiting for the network"
        case .unmetered: "Waiting for a network that is not metered"
        case .power: "Waiting for power saver mode to end"
        case .retry: "Waiting to try again"
        case .slot: "Waiting for other transfers to finish"
        }
    }

    /// The short form the tooltip lists after a count: "waiting for the network".
    package static func phrase(for task: TaskSnapshot) -> String? {
        sentence(for: task).map { $0.prefix(1).lowercased() + $0.dropFirst() }
    }
}
