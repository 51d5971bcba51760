/// A task's `Priority`, as the bus spells it.
package enum TaskPriorityName: String, Sendable, CaseIterable {
    case foreground
    case background
}
