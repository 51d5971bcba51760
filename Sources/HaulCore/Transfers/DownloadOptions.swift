/// Options of `DownloadWithOptions` (`dbus/org.haul.Haul1.xml`).
package struct DownloadOptions: Equatable, Sendable {
    package var headers: [String: String] = [:]
    /// Lower-case hex SHA-256 the finished file must have.
    package var sha256: String?
    package var overwrite = false
    package var startSuspended = false
    package var maxRetries: UInt32 = 5
    /// Connections the download may use; nil takes the Manager's `DefaultConnections`.
    package var connections: UInt32?
    /// The task's own rate limit in bytes per second (0: none), within ``RateLimitRule``.
    package var rateLimit: UInt64 = 0
    package var priority = TransferPriority.foreground
    /// Whether the task may use a metered network; nil takes the priority's default.
    package var allowMetered: Bool?
    /// For a download into a folder: the name the client suggests (`filename-hint`), made safe when used.
    package var filenameHint: String?
    /// The application the client says it acts for (`application`), which the service may believe.
    package var claimedApplication: String?
    /// Who asked for the task (D-Bus `Application`), as the service determined it.
    package var application = ""

    /// The longest `filename-hint` taken: a name is cut to 242 bytes anyway.
    package static let maximumHintBytes = 4096

    /// What `connections`, the task's `Connections` and `DefaultConnections` may be.
    package static let connectionRange: ClosedRange<UInt32> = 1...16

    package init() {}

    package static func validatedSHA256(_ hex: String) throws(TransferRequestError) -> String {
        let lower = hex.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { throw .invalidArgument("sha256 must be 64 hexadecimal digits") }
        return lower
    }

    /// Header names are HTTP tokens; values may not break lines (no header injection).
    package static func validatedHeaders(_ headers: [String: String]) throws(TransferRequestError) -> [String: String] {
        let tokenExtras = Set("!#$%&'*+-.^_`|~".utf8)
        for (name, value) in headers {
            let nameOK = !name.isEmpty && name.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || tokenExtras.contains($0)
            }
            guard nameOK else { throw .invalidArgument("'\(name)' is not a valid HTTP header name") }
            guard !value.utf8.contains(where: { $0 == 10 || $0 == 13 || $0 == 0 }) else {
                throw .invalidArgument("the value of header '\(name)' contains a line break")
            }
        }
        return headers
    }
}
