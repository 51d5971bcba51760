package import DBusKit

/// The names of `dbus/org.haul.Haul1.xml`: the bus name, the object paths and the interfaces, a contract other
/// programs rely on.
package enum HaulBus {
    package static let name = "org.haul.Haul1"
    package static let rootPath: ObjectPath = "/org/haul/Haul1"
    package static let managerPath: ObjectPath = "/org/haul/Haul1/Manager"
    package static let tasksPath: ObjectPath = "/org/haul/Haul1/Tasks"

    package static let managerInterface = "org.haul.Haul1.Manager"
    package static let indicatorInterface = "org.haul.Haul1.ActivityIndicator"
    package static let taskInterface = "org.haul.Haul1.Task"

    /// `/org/haul/Haul1/Tasks/<id>`.
    package static func taskPath(_ id: UInt32) -> ObjectPath { tasksPath.appending(String(id)) ?? tasksPath }

    /// The task number of a task's object path; nil for any other path.
    package static func taskID(of path: ObjectPath) -> UInt32? {
        guard path.isDescendant(of: tasksPath), path != tasksPath else { return nil }
        let element = path.rawValue.dropFirst(tasksPath.rawValue.count + 1)
        guard !element.contains("/"), let id = UInt32(element), String(id) == element else { return nil }
        return id
    }
}
