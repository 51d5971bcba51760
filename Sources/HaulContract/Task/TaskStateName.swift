/// A task's `State`, as the bus spells it. A task waiting to retry is running.
package enum TaskStateName: String, Sendable, CaseIterable {
    case running
    case suspended
    case canceling
    case completed
}
