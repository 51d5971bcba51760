/// Why a client's `Suspend`, `Resume` or `Cancel` was refused (D-Bus `org.haul.Haul1.Error.TaskCompleted`).
package enum TaskCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The task has completed: it can no longer be suspended, resumed or cancelled.
    case taskCompleted

    package var description: String {
        switch self {
        case .taskCompleted: "the task has completed"
        }
    }
}
