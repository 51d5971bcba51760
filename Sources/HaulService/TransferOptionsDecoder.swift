import DBusKit
import HaulContract
import HaulCore

/// Reads the `a{sv}` options of `dbus/org.haul.Haul1.xml`; an unknown key or a value of the wrong type is an
/// InvalidArgument.
enum TransferOptionsDecoder {
    static func download(_ options: [String: DBusValue]) throws(DBusError) -> DownloadOptions {
        var result = DownloadOptions()
        for (key, value) in options {
            switch (DownloadOption(rawValue: key), value) {
            case (.headers?, _):
                result.headers = try headers(value)
            case (.sha256?, .string(let hex)):
                result.sha256 = try request { () throws(TransferRequestError) in try DownloadOptions.validatedSHA256(hex) }
            case (.overwrite?, .boolean(let overwrite)):
                result.overwrite = overwrite
            case (.startSuspended?, .boolean(let suspended)):
                result.startSuspended = suspended
            case (.maxRetries?, .uint32(let retries)):
                result.maxRetries = retries
            case (.connections?, .uint32(let connections)):
                let range = DownloadOption.connectionRange
                guard range.contains(connections) else {
                    throw HaulErrorName.invalidArgument.error(
                        "\(key) must be between \(range.lowerBound) and \(range.upperBound), not \(connections)"
                    )
                }
                result.connections = connections
            case (.rateLimit?, .uint64(let limit)):
                result.rateLimit = try rateLimit(key, limit)
            case (.priority?, .string(let name)):
                result.priority = try priority(key, name)
            case (.allowMetered?, .boolean(let allowed)):
                result.allowMetered = allowed
            case (.filenameHint?, .string(let hint)):
                guard hint.utf8.count <= DownloadOptions.maximumHintBytes else {
                    throw HaulErrorName.invalidArgument.error(
                        "\(key) is longer than \(DownloadOptions.maximumHintBytes) bytes"
                    )
                }
                result.filenameHint = hint
            case (.application?, .string(let name)):
                guard let application = CallerApplication.claimed(name) else {
                    throw HaulErrorName.invalidArgument.error(
                        "\(key) must be a desktop-file id of at most \(CallerApplication.maximumBytes) bytes, without "
                            + "white space, '/' or control characters"
                    )
                }
                result.claimedApplication = application
            default:
                throw invalid(key, value, known: DownloadOption.summary)
            }
        }
        return result
    }

    static func upload(_ options: [String: DBusValue]) throws(DBusError) -> UploadOptions {
        var result = UploadOptions()
        for (key, value) in options {
            switch (UploadOption(rawValue: key), value) {
            case (.method?, .string(let method)):
                guard let parsed = UploadMethodName(rawValue: method.uppercased()) else {
                    let names = UploadMethodName.allCases.map(\.rawValue).joined(separator: " or ")
                    throw HaulErrorName.invalidArgument.error("\(key) must be \(names), not '\(method)'")
                }
                result.method = UploadOptions.Method(parsed)
            case (.headers?, _):
                result.headers = try headers(value)
            case (.rateLimit?, .uint64(let limit)):
                result.rateLimit = try rateLimit(key, limit)
            case (.priority?, .string(let name)):
                result.priority = try priority(key, name)
            case (.allowMetered?, .boolean(let allowed)):
                result.allowMetered = allowed
            default:
                throw invalid(key, value, known: UploadOption.summary)
            }
        }
        return result
    }

    /// The bounds keep a request head far below the 64 KiB of NIO's write buffer: past it, async-http-client reached
    /// a precondition (a crash) when the server answered before the head was written.
    private static func headers(_ value: DBusValue) throws(DBusError) -> [String: String] {
        guard case .dictionary(.string, .string, _) = value, let dictionary = value.stringDictionary else {
            let option = DownloadOption.headers
            throw HaulErrorName.invalidArgument.error(
                "\(option.rawValue) must be an \(option.type.signature) without duplicate names"
            )
        }
        let headers = dictionary.compactMapValues(\.stringValue)
        typealias Limits = RequestHeaderLimits
        guard headers.count <= Limits.maximumCount else {
            throw HaulErrorName.invalidArgument.error("at most \(Limits.maximumCount) headers, not \(headers.count)")
        }
        // As sent: "name: value\r\n".
        let lines = headers.map { ($0.key, $0.key.utf8.count + $0.value.utf8.count + 4) }
        if let (name, _) = lines.first(where: { $0.1 > Limits.maximumLineBytes }) {
            throw HaulErrorName.invalidArgument.error(
                "header '\(name.prefix(64))' is longer than \(Limits.maximumLineBytes) bytes"
            )
        }
        guard lines.reduce(0, { $0 + $1.1 }) <= Limits.maximumBytes else {
            throw HaulErrorName.invalidArgument.error(
                "the headers take more than \(Limits.maximumBytes) bytes together"
            )
        }
        return try request { () throws(TransferRequestError) in try DownloadOptions.validatedHeaders(headers) }
    }

    private static func priority(_ key: String, _ name: String) throws(DBusError) -> TransferPriority {
        guard let parsed = TaskPriorityName(rawValue: name) else {
            let names = TaskPriorityName.allCases.map(\.rawValue).joined(separator: " or ")
            throw HaulErrorName.invalidArgument.error("\(key) must be \(names), not '\(name.busSafe)'")
        }
        return TransferPriority(parsed)
    }

    private static func rateLimit(_ key: String, _ limit: UInt64) throws(DBusError) -> UInt64 {
        guard RateLimitRule.isValid(limit) else {
            throw HaulErrorName.invalidArgument.error("\(key) must be \(RateLimitRule.requirement), not \(limit)")
        }
        return limit
    }

    private static func invalid(_ key: String, _ value: DBusValue, known: String) -> DBusError {
        HaulErrorName.invalidArgument.error(
            "unknown option '\(key)' of type '\(value.type.signature)'; known options: \(known)"
        )
    }
}

extension UploadOptions.Method {
    init(_ name: UploadMethodName) {
        self =
            switch name {
            case .put: .put
            case .post: .post
            }
    }
}
