import FoundationEssentials

/// A proxy named by `http_proxy` and friends: `[scheme://][user[:password]@]host[:port]`, as curl reads them.
///
/// HTTP proxies tunnel every request with `CONNECT` (async-http-client does so for http and https targets alike),
/// with basic authentication when the URL has a user. SOCKS5 proxies get the target's host name, so they resolve
/// it themselves (`socks5` and `socks5h` therefore behave alike) and take no credentials. Without a port, 1080 is
/// used, as curl does.
package struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        case http
        case socks5
    }

    package var kind: Kind
    package var host: String
    package var port: Int
    package var username: String?
    package var password: String?

    package static let defaultPort = 1080

    package init(kind: Kind, host: String, port: Int = defaultPort, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// Parses a proxy variable's value; `variable` names it in the error.
    package init(parsing value: String, variable: String) throws(ProxyConfigurationError) {
        let trimmed = value.trimmingWhitespace()
        let text = trimmed.contains("://") ? trimmed : "http://" + trimmed
        func invalid(_ reason: String) -> ProxyConfigurationError {
            ProxyConfigurationError(variable: variable, reason: reason)
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw invalid("not a proxy URL")
        }
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default: throw invalid("the \(scheme) proxy scheme is not supported (use http, socks5 or socks5h)")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw invalid("no proxy host") }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw invalid("a proxy URL has no path or query")
        }
        let port = components.port ?? Self.defaultPort
        guard (1...65535).contains(port) else { throw invalid("port \(port) is out of range") }
        self.host = host
        self.port = port
        // URLComponents decodes them (`p%40ss` is `p@ss`).
        username = components.user
        password = components.password
        if kind == .socks5, username != nil { throw invalid("SOCKS proxies with credentials are not supported") }
    }

    /// The proxy as logs may show it: never the password.
    package var description: String {
        let scheme = kind == .http ? "http" : "socks5h"
        let user = username.map { "\($0)@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(user)\(shownHost):\(port)"
    }
}

/// A proxy variable that cannot be used. Transfers it applies to fail rather than go around the proxy.
package struct ProxyConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    package var variable: String
    package var reason: String

    package var description: String { "\(variable) is not usable: \(reason)" }
}
