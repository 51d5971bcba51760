/// A queued task's `WaitingFor`, as the bus spells it (`""` when nothing is waited for). When several reasons apply,
/// the first of this list is shown.
package enum WaitingForName: String, Sendable, CaseIterable {
    case sleep
    case network
    case unmetered
    case power
    case retry
    case slot
}
