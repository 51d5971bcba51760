/// A task's `Kind`, as the bus spells it.
package enum TaskKindName: String, Sendable, CaseIterable {
    case download
    case upload
}
