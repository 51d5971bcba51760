package import DBusKit

/// The signals of `org.haul.Haul1.Manager`.
package enum ManagerSignal: String, Sendable, CaseIterable {
    /// A task started or resumed.
    case taskDidResume = "TaskDidResume"
    case taskDidSuspend = "TaskDidSuspend"
    /// A task finished: its path, then the error name and message (both empty on success).
    case taskDidComplete = "TaskDidComplete"

    package var declaration: DBusInterfaceDescription.Signal {
        let task = DBusInterfaceDescription.Argument("task", .objectPath)
        switch self {
        case .taskDidResume, .taskDidSuspend:
            return .init(rawValue, [task])
        case .taskDidComplete:
            return .init(rawValue, [task, .init("error_name", .string), .init("error_message", .string)])
        }
    }
}
