package import DBusKit

/// The names of `dbus/org.haul.Haul1.xml`: a contract other programs rely on.
package enum HaulBus {
    package static let name = "org.haul.Haul1"
    package static let rootPath: ObjectPath = "/org/haul/Haul1"
    package static let managerPath: ObjectPath = "/org/haul/Haul1/Manager"
    package static let tasksPath: ObjectPath = "/org/haul/Haul1/Tasks"

    package static let managerInterface = "org.haul.Haul1.Manager"
    package static let indicatorInterface = "org.haul.Haul1.ActivityIndicator"
    package static let taskInterface = "org.haul.Haul1.Task"
}
