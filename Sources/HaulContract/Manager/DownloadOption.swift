package import DBusKit

/// The keys of `DownloadWithOptions`' options (`a{sv}`), in the contract's order, with the type each value must
/// have.
package enum DownloadOption: String, ContractOption {
    /// Extra request headers, within ``RequestHeaderLimits``.
    case headers
    /// 64 hex digits the finished file must match.
    case sha256
    /// Replace an existing destination.
    case overwrite
    /// Create the task suspended.
    case startSuspended = "start-suspended"
    /// Retries of transient failures.
    case maxRetries = "max-retries"
    /// Connections the download may use, in ``connectionRange``.
    case connections
    /// The task's own rate limit in bytes per second (0: none).
    case rateLimit = "rate-limit"
    /// A ``TaskPriorityName``.
    case priority
    /// May transfer on a metered network.
    case allowMetered = "allow-metered"
    /// A file name the client suggests for a download into a folder (after `Content-Disposition`).
    case filenameHint = "filename-hint"
    /// The desktop-file id of the application asking, from an unsandboxed caller (the task's `Application`).
    case application

    /// What `connections`, a task's `Connections` and the Manager's `DefaultConnections` may be.
    package static let connectionRange: ClosedRange<UInt32> = 1...16

    package var type: DBusType {
        switch self {
        case .headers: .dictionary(key: .string, value: .string)
        case .sha256, .priority, .filenameHint, .application: .string
        case .overwrite, .startSuspended, .allowMetered: .boolean
        case .maxRetries, .connections: .uint32
        case .rateLimit: .uint64
        }
    }
}
