public import FoundationEssentials
import Glibc

/// Why a transfer request was refused before anything started.
public enum TransferRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidArgument(String)
    case unsupportedScheme(String)

    public var description: String {
        switch self {
        case .invalidArgument(let message): message
        case .unsupportedScheme(let scheme): "unsupported URL scheme '\(scheme)': only http and https are supported"
        }
    }
}

/// A validated transfer URL: http or https, with a host and a port that a socket can use.
///
/// Everything a request needs is checked here, for a client's URL and for every redirect target alike: a URL that
/// passes can be handed to the HTTP stack without reaching a trap there (a port above 65535 did).
public struct TransferURL: Equatable, Sendable, CustomStringConvertible {
    public let url: URL

    public init(_ string: String) throws(TransferRequestError) {
        let trimmed = string.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .invalidArgument("the URL is empty") }
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
            throw .invalidArgument("'\(Self.redacted(string))' is not a valid absolute URL")
        }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        guard let host = components.host, !host.isEmpty, let url = components.url, url.host() != nil else {
            throw .invalidArgument("'\(Self.redacted(string))' has no host")
        }
        // A port too large for an Int parses as no port at all: the URL would quietly go to port 80.
        let port = components.port ?? (Self.hasPort(trimmed) ? 0 : 80)
        guard (1...65535).contains(port) else {
            throw .invalidArgument("the port of '\(Self.redacted(string))' is not between 1 and 65535")
        }
        self.url = url
    }

    /// Whether the authority of `url` (which has one) names a port: a colon after the host, outside IPv6 brackets.
    private static func hasPort(_ url: String) -> Bool {
        guard let start = url.firstRange(of: "://")?.upperBound else { return false }
        let end = url[start...].firstIndex(where: { "/?#".contains($0) }) ?? url.endIndex
        let authority = url[start..<end]
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        let afterHost = hostAndPort.lastIndex(of: "]").map { hostAndPort[$0...] } ?? hostAndPort
        return afterHost.contains(":")
    }

    /// The URL as shown to clients (the Task's `URL` property): any password removed.
    public var description: String { Self.redacted(url.absoluteString) }

    /// `string` without the password of its userinfo, whether or not it is a valid transfer URL: what a URL may
    /// look like on the bus, in a log line or in an error message.
    public static func redacted(_ string: String) -> String {
        if var components = URLComponents(string: string) {
            guard components.password != nil else { return string }
            components.password = nil
            if let shown = components.string { return shown }
        }
        // Not parseable as a URL: drop everything between "://" and the last "@" before the path.
        guard let schemeEnd = string.firstRange(of: "://") else { return string }
        let authorityEnd = string[schemeEnd.upperBound...].firstIndex(where: { "/?#".contains($0) }) ?? string.endIndex
        guard let at = string[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") else { return string }
        return String(string[..<schemeEnd.upperBound]) + "…" + String(string[at...])
    }
}

/// A validated local path for a download's destination or an upload's source.
public struct LocalPath: Equatable, Sendable, CustomStringConvertible {
    public let path: String

    public init(_ path: String) throws(TransferRequestError) {
        guard path.hasPrefix("/") else { throw .invalidArgument("'\(path)' is not an absolute path") }
        guard !path.hasSuffix("/") else { throw .invalidArgument("'\(path)' names a directory, not a file") }
        guard !path.utf8.contains(0) else { throw .invalidArgument("the path contains a NUL byte") }
        self.path = Self.normalized(path)
    }

    public var description: String { path }

    /// As `NSString.standardizingPath` on Linux, which this replaced: what exists of the path is resolved by the file
    /// system (`realpath`), so that a symbolic link, and `..` after one, mean what the kernel makes of them. A file
    /// that does not exist yet is named in its resolved folder; with no folder either, the path is resolved
    /// lexically.
    static func normalized(_ path: String) -> String {
        if let resolved = realPath(path) { return resolved }
        let (folder, name) = split(path)
        if name != ".", name != "..", let resolved = realPath(folder) {
            return (resolved == "/" ? "" : resolved) + "/" + name
        }
        return lexicallyNormalized(path)
    }

    /// An absolute path's folder (`/` for a file at the root) and last component.
    private static func split(_ path: String) -> (folder: String, name: Substring) {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        return (slash == path.startIndex ? "/" : String(path[..<slash]), path[path.index(after: slash)...])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `.`, `..` and repeated slashes resolved by the text alone; `..` above the root stays at the root.
    static func lexicallyNormalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The folder holding the file: what the destination's checks look at.
    public var folder: String { Self.split(path).folder }
}

/// Options of `DownloadWithOptions` (`dbus/org.haul.Haul1.xml`).
public struct DownloadOptions: Equatable, Sendable {
    public var headers: [String: String] = [:]
    /// Lower-case hex SHA-256 the finished file must have.
    public var sha256: String?
    public var overwrite = false
    public var startSuspended = false
    public var maxRetries: UInt32 = 5
    /// Connections the download may use; nil takes the Manager's `DefaultConnections`.
    public var connections: UInt32?

    /// What `connections`, the task's `Connections` and `DefaultConnections` may be.
    public static let connectionRange: ClosedRange<UInt32> = 1...16

    public init() {}

    public static func validatedSHA256(_ hex: String) throws(TransferRequestError) -> String {
        let lower = hex.lowercased()
        guard lower.utf8.count == 64, lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { throw .invalidArgument("sha256 must be 64 hexadecimal digits") }
        return lower
    }

    /// Header names are HTTP tokens; values may not break lines (no header injection).
    public static func validatedHeaders(_ headers: [String: String]) throws(TransferRequestError) -> [String: String] {
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

/// Options of `UploadWithOptions` (`dbus/org.haul.Haul1.xml`).
public struct UploadOptions: Equatable, Sendable {
    public enum Method: String, Sendable { case put = "PUT", post = "POST" }

    public var method: Method = .put
    public var headers: [String: String] = [:]

    public init() {}
}
