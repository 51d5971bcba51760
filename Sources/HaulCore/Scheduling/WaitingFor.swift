/// Why a task that wants to run is queued instead (the bus spells it as `WaitingForName`).
///
/// Declared in order of precedence: when several reasons apply, the first one is shown, so a task is never said to
/// wait for a slot it could not use anyway.
package enum WaitingFor: Sendable, Hashable, CaseIterable, Comparable {
    /// The machine is going to sleep (or the wake-up has not been announced yet).
    case sleep
    /// The network is offline or behind a captive portal.
    case network
    /// The network is metered and the task may not use a metered network.
    case unmetered
    /// Power-saver mode is on and the task is a background one.
    case power
    /// A back-off after a failed attempt has not run out yet.
    case retry
    /// `MaxRunningTasks` tasks are already transferring.
    case slot

    package static func < (lhs: WaitingFor, rhs: WaitingFor) -> Bool {
        lhs.precedence < rhs.precedence
    }

    private var precedence: Int {
        switch self {
        case .sleep: 0
        case .network: 1
        case .unmetered: 2
        case .power: 3
        case .retry: 4
        case .slot: 5
        }
    }
}
