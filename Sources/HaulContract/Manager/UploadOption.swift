package import DBusKit

/// The keys of `UploadWithOptions`' options (`a{sv}`), in the contract's order, with the type each value must have.
package enum UploadOption: String, ContractOption {
    /// The HTTP method, an ``UploadMethodName``.
    case method
    /// Extra request headers, as for downloads.
    case headers
    /// The task's own rate limit in bytes per second (0: none).
    case rateLimit = "rate-limit"
    /// A ``TaskPriorityName``.
    case priority
    /// May transfer on a metered network.
    case allowMetered = "allow-metered"

    package var type: DBusType {
        switch self {
        case .method, .priority: .string
        case .headers: .dictionary(key: .string, value: .string)
        case .rateLimit: .uint64
        case .allowMetered: .boolean
        }
    }
}

/// The values of the `method` upload option.
package enum UploadMethodName: String, Sendable, CaseIterable {
    case put = "PUT"
    case post = "POST"
}
