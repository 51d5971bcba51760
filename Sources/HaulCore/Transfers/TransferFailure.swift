#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a transfer attempt, or a whole task, failed.
///
/// ``isTransient`` decides whether the task lifecycle retries: transient failures (network trouble, stalls, 408, 429,
/// 5xx) are retried with back-off, permanent ones complete the task at once.
package struct TransferFailure: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    /// The error name.
    package var kind: TransferErrorKind
    /// A message for people (D-Bus `ErrorMessage`).
    package var message: String
    /// The HTTP status behind the failure, if a response was received.
    package var httpStatus: UInt32?
    /// Whether trying again may succeed.
    package var isTransient: Bool
    /// How long the server asked us to wait (`Retry-After`), if it did.
    package var retryAfter: Duration?

    /// Creates a failure.
    package init(
        kind: TransferErrorKind,
        message: String,
        httpStatus: UInt32? = nil,
        isTransient: Bool,
        retryAfter: Duration? = nil
    ) {
        self.kind = kind
        self.message = message
        self.httpStatus = httpStatus
        self.isTransient = isTransient
        self.retryAfter = retryAfter
    }

    package var description: String { "\(kind.rawValue): \(message)" }

    // MARK: - Common failures

    /// An HTTP error status, with a message such as `HTTP 404 Not Found`.
    ///
    /// 408, 429 and 5xx are transient (retried); every other status (other 4xx, and 1xx–3xx, which reach this point
    /// only when something is wrong, since redirects are followed before) is permanent.
    package static func http(status: Int, retryAfter: Duration? = nil) -> TransferFailure {
        let phrase = reasonPhrase(status).map { " \($0)" } ?? ""
        return TransferFailure(
            kind: .http,
            message: "HTTP \(status)\(phrase)",
            httpStatus: UInt32(exactly: status),
            isTransient: status == 408 || status == 429 || (500...599).contains(status),
            retryAfter: retryAfter
        )
    }

    /// A network failure (connection refused or reset, DNS, TLS, a truncated body): transient.
    package static func network(_ message: String) -> TransferFailure {
        TransferFailure(kind: .network, message: message, isTransient: true)
    }

    /// A timeout or a stalled transfer: transient.
    package static func timeout(_ message: String) -> TransferFailure {
        TransferFailure(kind: .timeout, message: message, isTransient: true)
    }

    /// The task was cancelled (as `NSURLErrorCancelled`): permanent.
    package static var cancelled: TransferFailure {
        TransferFailure(kind: .cancelled, message: "the transfer was cancelled", isTransient: false)
    }

    /// The finished download does not have the SHA-256 the caller asked for: permanent.
    package static func checksumMismatch(expected: String, actual: String) -> TransferFailure {
        TransferFailure(
            kind: .checksumMismatch,
            message: "SHA-256 mismatch: expected \(expected), got \(actual)",
            isTransient: false
        )
    }

    /// No space (or quota) left for `path`: permanent.
    package static func diskFull(_ path: String) -> TransferFailure {
        TransferFailure(kind: .diskFull, message: "no space left on the device for \(path)", isTransient: false)
    }

    /// `path` may not be read or written: permanent.
    package static func permissionDenied(_ path: String) -> TransferFailure {
        TransferFailure(kind: .permissionDenied, message: "permission denied: \(path)", isTransient: false)
    }

    /// The destination `path` exists and the caller did not ask to overwrite it: permanent.
    package static func fileExists(_ path: String) -> TransferFailure {
        TransferFailure(kind: .fileExists, message: "\(path) already exists", isTransient: false)
    }

    /// `path` (an upload's source, or a download's directory) does not exist: permanent.
    package static func notFound(_ path: String) -> TransferFailure {
        TransferFailure(kind: .notFound, message: "no such file or directory: \(path)", isTransient: false)
    }

    /// The failure for a file-system call on `path` that set `errno`.
    ///
    /// Errors without a kind of their own (EIO, EISDIR, …) become a permanent ``TransferErrorKind/network`` failure
    /// named "I/O error": retrying a broken disk does not help, and the contract has no better name for it.
    package static func fromErrno(_ errno: Int32, path: String) -> TransferFailure {
        switch errno {
        case ENOSPC, EDQUOT:
            return .diskFull(path)
        case EACCES, EPERM, EROFS:
            return .permissionDenied(path)
        case EEXIST:
            return .fileExists(path)
        case ENOENT, ENOTDIR:
            return .notFound(path)
        default:
            let reason = String(cString: strerror(errno))
            return TransferFailure(
                kind: .network,
                message: "I/O error on \(path): \(reason) (errno \(errno))",
                isTransient: false
            )
        }
    }

    /// The RFC 9110 reason phrase of the statuses a transfer can meet, so messages read as servers print them.
    private static func reasonPhrase(_ status: Int) -> String? {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        case 508: "Loop Detected"
        case 511: "Network Authentication Required"
        default: nil
        }
    }

    // MARK: - Codable

    private enum CodingKeys: String, CodingKey {
        case kind, message, httpStatus, isTransient, retryAfter
    }

    /// The longest `retryAfter` a stored failure may hold; anything longer is corrupt (and could not be turned back
    /// into a `Duration` safely).
    private static let maximumStoredRetryAfterSeconds = 1e9

    /// Decodes a failure; `retryAfter` is a number of seconds, finite and from 0 to 10⁹.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(TransferErrorKind.self, forKey: .kind)
        message = try container.decode(String.self, forKey: .message)
        httpStatus = try container.decodeIfPresent(UInt32.self, forKey: .httpStatus)
        isTransient = try container.decode(Bool.self, forKey: .isTransient)
        if let seconds = try container.decodeIfPresent(Double.self, forKey: .retryAfter) {
            guard seconds.isFinite, (0...Self.maximumStoredRetryAfterSeconds).contains(seconds) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .retryAfter,
                    in: container,
                    debugDescription: "retryAfter must be from 0 to 1e9 seconds, not \(seconds)"
                )
            }
            retryAfter = .seconds(seconds)
        } else {
            retryAfter = nil
        }
    }

    /// Encodes the failure, `retryAfter` as a number of seconds (clamped to 0…10⁹, so that whatever a server sent
    /// can be stored and read back).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(httpStatus, forKey: .httpStatus)
        try container.encode(isTransient, forKey: .isTransient)
        let seconds = retryAfter.map { min(max($0 / .seconds(1), 0), Self.maximumStoredRetryAfterSeconds) }
        try container.encodeIfPresent(seconds, forKey: .retryAfter)
    }
}
