package import DBusKit
import HaulCore

/// `org.haul.Haul1.Error.*`
package enum HaulErrorName: String, Sendable, CaseIterable {
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

    package var fullName: String { "org.haul.Haul1.Error.\(rawValue)" }

    package func error(_ message: String) -> DBusError { DBusError(name: fullName, message: message) }
}
