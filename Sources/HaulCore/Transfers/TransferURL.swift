package import FoundationEssentials

/// A validated transfer URL: http or https, with a host and a port that a socket can use.
///
/// Everything a request needs is checked here, for a client's URL and for every redirect target alike: a URL that
/// passes can be handed to the HTTP stack without reaching a trap there (a port above 65535 did).
package struct TransferURL: Equatable, Sendable, CustomStringConvertible {
    package let url: URL

    /// The longest URL accepted.
    package static let maximumLength = 8192

    package init(_ string: String) throws(TransferRequestError) {
        let trimmed = string.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .invalidArgument("the URL is empty") }
        // As Apache and nginx limit a request line: a longer URL (or redirect target) would only push a request
        // toward the HTTP stack's 64 KiB head limit.
        guard trimmed.utf8.count <= Self.maximumLength else {
            throw .invalidArgument("the URL is longer than \(Self.maximumLength) bytes")
        }
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
    package var description: String { Self.redacted(url.absoluteString) }

    /// `string` without the password of its userinfo, whether or not it is a valid transfer URL: what a URL may
    /// look like on the bus, in a log line or in an error message.
    package static func redacted(_ string: String) -> String {
        // Without an "@" there is no userinfo: the common case, at every publication of a task, needs no parsing.
        guard string.utf8.contains(UInt8(ascii: "@")) else { return string }
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
