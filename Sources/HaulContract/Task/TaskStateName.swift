/// A task's `State`, as the bus spells it. A running task transfers; a queued one wants to run but waits
/// (``TaskProperty/waitingFor`` says why), a back-off before a retry included.
package enum TaskStateName: String, Sendable, CaseIterable {
    case running
    case queued
    case suspended
    case canceling
    case completed
}
