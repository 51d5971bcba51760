import DBusKit

/// What the task service sends out, queued in the order its state changed and sent in that order by
/// `TaskService.publishing()`.
enum TaskPublication: Sendable, CustomStringConvertible {
    case export(DBusExportedInterface, at: ObjectPath)
    case unexport(ObjectPath)
    case taskProperties([String: DBusValue], at: ObjectPath)
    case managerProperties([String: DBusValue])
    case managerSignal(member: String, body: [DBusValue])
    /// How many tasks run, for the activity indicator.
    case runningTasks(UInt32)
    /// An attempt ended in a way that may have left its connection in async-http-client's pool.
    case connectionReleased
    /// Resumed once everything queued before it is sent.
    case barrier(CheckedContinuation<Void, Never>)

    var description: String {
        switch self {
        case .export(_, let path): "the export of \(path)"
        case .unexport(let path): "the removal of \(path)"
        case .taskProperties(_, let path): "the properties of \(path)"
        case .managerProperties: "the Manager's properties"
        case .managerSignal(let member, _): member
        case .runningTasks: "the running task count"
        case .connectionReleased: "a connection left in the pool"
        case .barrier: "a barrier"
        }
    }
}
