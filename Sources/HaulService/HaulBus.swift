public import DBusKit

/// The names of `dbus/org.haul.Haul1.xml`: a contract other programs rely on.
public enum HaulBus {
    public static let name = "org.haul.Haul1"
    public static let rootPath: ObjectPath = "/org/haul/Haul1"
    public static let managerPath: ObjectPath = "/org/haul/Haul1/Manager"
    public static let tasksPath: ObjectPath = "/org/haul/Haul1/Tasks"

    public static let managerInterface = "org.haul.Haul1.Manager"
    public static let indicatorInterface = "org.haul.Haul1.ActivityIndicator"
    public static let taskInterface = "org.haul.Haul1.Task"
}

/// `org.haul.Haul1.Error.*`
public enum HaulErrorName: String, Sendable, CaseIterable {
    case invalidArgument = "InvalidArgument"
    case unsupportedScheme = "UnsupportedScheme"
    case notFound = "NotFound"
    case fileExists = "FileExists"
    case permissionDenied = "PermissionDenied"
    case taskCompleted = "TaskCompleted"
    case taskNotCompleted = "TaskNotCompleted"
    case network = "Network"
    case http = "HTTP"
    case cancelled = "Cancelled"
    case checksumMismatch = "ChecksumMismatch"
    case diskFull = "DiskFull"
    case timeout = "Timeout"

    public var fullName: String { "org.haul.Haul1.Error.\(rawValue)" }

    public func error(_ message: String) -> DBusError { DBusError(name: fullName, message: message) }
}
