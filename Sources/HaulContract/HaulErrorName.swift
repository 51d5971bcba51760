package import DBusKit

/// The contract's errors, `org.haul.Haul1.Error.<rawValue>`.
package enum HaulErrorName: String, Sendable, CaseIterable {
    case invalidArgument = "InvalidArgument"
    case unsupportedScheme = "UnsupportedScheme"
    case notFound = "NotFound"
    case fileExists = "FileExists"
    case permissionDenied = "PermissionDenied"
    case taskCompleted = "TaskCompleted"
    case taskNotCompleted = "TaskNotCompleted"
    case taskNotSuspended = "TaskNotSuspended"
    case network = "Network"
    case http = "HTTP"
    case cancelled = "Cancelled"
    case checksumMismatch = "ChecksumMismatch"
    case diskFull = "DiskFull"
    case timeout = "Timeout"

    package static let prefix = "org.haul.Haul1.Error."

    /// The error named `fullName` (`org.haul.Haul1.Error.HTTP`); nil for any other name.
    package init?(fullName: String) {
        guard fullName.hasPrefix(Self.prefix) else { return nil }
        self.init(rawValue: String(fullName.dropFirst(Self.prefix.count)))
    }

    package var fullName: String { Self.prefix + rawValue }

    package func error(_ message: String) -> DBusError { DBusError(name: fullName, message: message) }
}
