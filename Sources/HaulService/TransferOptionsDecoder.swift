import DBusKit
import HaulCore

/// Reads the `a{sv}` options of `dbus/org.haul.Haul1.xml`; an unknown key or a value of the wrong type is an
/// InvalidArgument.
enum TransferOptionsDecoder {
    static func download(_ options: [String: DBusValue]) throws(DBusError) -> DownloadOptions {
        var result = DownloadOptions()
        for (key, value) in options {
            switch (key, value) {
            case ("headers", _):
                result.headers = try headers(value)
            case ("sha256", .string(let hex)):
                result.sha256 = try request { () throws(TransferRequestError) in try DownloadOptions.validatedSHA256(hex) }
            case ("overwrite", .boolean(let overwrite)):
                result.overwrite = overwrite
            case ("start-suspended", .boolean(let suspended)):
                result.startSuspended = suspended
            case ("max-retries", .uint32(let retries)):
                result.maxRetries = retries
            case ("connections", .uint32(let connections)):
                guard DownloadOptions.connectionRange.contains(connections) else {
                    throw HaulErrorName.invalidArgument.error("connections must be between 1 and 16, not \(connections)")
                }
                result.connections = connections
            default:
                throw invalid(
                    key, value,
                    known: ["headers a{ss}", "sha256 s", "overwrite b", "start-suspended b", "max-retries u", "connections u"]
                )
            }
        }
        return result
    }

    static func upload(_ options: [String: DBusValue]) throws(DBusError) -> UploadOptions {
        var result = UploadOptions()
        for (key, value) in options {
            switch (key, value) {
            case ("method", .string(let method)):
                guard let parsed = UploadOptions.Method(rawValue: method.uppercased()) else {
                    throw HaulErrorName.invalidArgument.error("method must be PUT or POST, not '\(method)'")
                }
                result.method = parsed
            case ("headers", _):
                result.headers = try headers(value)
            default:
                throw invalid(key, value, known: ["method s", "headers a{ss}"])
            }
        }
        return result
    }

    /// Bounds of the `headers` option, those of common servers (Apache: 100 fields of at most 8190 bytes; nginx:
    /// lines of 8 KiB). They keep a request head far below the 64 KiB of NIO's write buffer: past it,
    /// async-http-client reached a precondition (a crash) when the server answered before the head was written.
    static let maximumHeaderCount = 100
    static let maximumHeaderLineBytes = 8192
    static let maximumHeaderBytes = 32_768

    private static func headers(_ value: DBusValue) throws(DBusError) -> [String: String] {
        guard case .dictionary(.string, .string, _) = value, let dictionary = value.stringDictionary else {
            throw HaulErrorName.invalidArgument.error("headers must be an a{ss} without duplicate names")
        }
        let headers = dictionary.compactMapValues(\.stringValue)
        guard headers.count <= maximumHeaderCount else {
            throw HaulErrorName.invalidArgument.error("at most \(maximumHeaderCount) headers, not \(headers.count)")
        }
        // As sent: "name: value\r\n".
        let lines = headers.map { ($0.key, $0.key.utf8.count + $0.value.utf8.count + 4) }
        if let (name, _) = lines.first(where: { $0.1 > maximumHeaderLineBytes }) {
            throw HaulErrorName.invalidArgument.error(
                "header '\(name.prefix(64))' is longer than \(maximumHeaderLineBytes) bytes"
            )
        }
        guard lines.reduce(0, { $0 + $1.1 }) <= maximumHeaderBytes else {
            throw HaulErrorName.invalidArgument.error("the headers take more than \(maximumHeaderBytes) bytes together")
        }
        return try request { () throws(TransferRequestError) in try DownloadOptions.validatedHeaders(headers) }
    }

    private static func invalid(_ key: String, _ value: DBusValue, known: [String]) -> DBusError {
        HaulErrorName.invalidArgument.error(
            "unknown option '\(key)' of type '\(value.type.signature)'; known options: \(known.joined(separator: ", "))"
        )
    }
}
