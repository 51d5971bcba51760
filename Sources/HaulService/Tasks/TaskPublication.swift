import DBusKit
import HaulContract

/// What the task service sends out, queued in its `Outbox` in the order its state changed and sent in that order by
/// `TaskService.run()`.
enum TaskPublication: Sendable, CustomStringConvertible {
    /// `announced`: with an `InterfacesAdded`.
    case export(DBusExportedInterface, at: ObjectPath, announced: Bool)
    case unexport(ObjectPath)
    case taskProperties([String: DBusValue], at: ObjectPath)
    /// Every property of the task, in the contract's order.
    case allTaskProperties([DBusValue], at: ObjectPath)
    case managerProperties([String: DBusValue])
    case managerSignal(member: String, body: [DBusValue])
    /// How many tasks run, for the activity indicator.
    case runningTasks(UInt32)

    /// The change to hauld's objects this is, or nil for what goes elsewhere (the running task count).
    var objectChange: DBusObjectChange? {
        switch self {
        case .export(let interface, let path, let announced): .export([interface], at: path, announced: announced)
        case .unexport(let path): .unexport(path)
        case .taskProperties(let properties, let path):
            .properties(properties, interface: HaulBus.taskInterface, at: path)
        case .allTaskProperties(let values, let path):
            .allProperties(values, interface: HaulBus.taskInterface, at: path)
        case .managerProperties(let properties):
            .properties(properties, interface: HaulBus.managerInterface, at: HaulBus.managerPath)
        case .managerSignal(let member, let body):
            .signal(path: HaulBus.managerPath, interface: HaulBus.managerInterface, member: member, body)
        case .runningTasks: nil
        }
    }

    var description: String {
        switch self {
        case .export(_, let path, _): "the export of \(path)"
        case .unexport(let path): "the removal of \(path)"
        case .taskProperties(_, let path), .allTaskProperties(_, let path): "the properties of \(path)"
        case .managerProperties: "the Manager's properties"
        case .managerSignal(let member, _): member
        case .runningTasks: "the running task count"
        }
    }
}
