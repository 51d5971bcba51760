package import FoundationEssentials

/// Which proxy, if any, a transfer goes through: read once from the environment, as curl reads it.
///
/// - `http_proxy` for http URLs: lower case only, since `HTTP_PROXY` can be set by a web request's `Proxy:`
///   header in CGI programs ("httpoxy"), which is why curl ignores it too;
/// - `https_proxy` (or `HTTPS_PROXY`) for https URLs;
/// - `all_proxy` (or `ALL_PROXY`) for either when its own variable is unset;
/// - `no_proxy` (or `NO_PROXY`): hosts that go direct (see ``NoProxyList``).
///
/// The lower-case spelling wins when both are set; an empty value counts as unset.
package struct ProxySettings: Sendable, Equatable {
    /// How one transfer reaches its server.
    package enum Route: Sendable, Equatable {
        case direct
        case proxy(ProxyServer)
        /// The variable that applies cannot be used: failing beats quietly going around the proxy.
        case unusable(ProxyConfigurationError)
    }

    package var http: Result<ProxyServer, ProxyConfigurationError>?
    package var https: Result<ProxyServer, ProxyConfigurationError>?
    package var noProxy: NoProxyList

    /// No proxy at all.
    package static let none = ProxySettings(environment: [:])

    package init(environment: [String: String]) {
        func value(_ names: String...) -> (name: String, value: String)? {
            for name in names {
                if let value = environment[name], !value.trimmingWhitespace().isEmpty {
                    return (name, value)
                }
            }
            return nil
        }
        func server(_ names: String...) -> Result<ProxyServer, ProxyConfigurationError>? {
            let all = value("all_proxy", "ALL_PROXY")
            guard let found = names.lazy.compactMap({ value($0) }).first ?? all else { return nil }
            return Result { () throws(ProxyConfigurationError) in
                try ProxyServer(parsing: found.value, variable: found.name)
            }
        }
        http = server("http_proxy")
        https = server("https_proxy", "HTTPS_PROXY")
        noProxy = NoProxyList(value("no_proxy", "NO_PROXY")?.value ?? "")
    }

    /// The route for `url` (an http or https URL with a host).
    package func route(for url: URL) -> Route {
        let setting = url.scheme?.lowercased() == "https" ? https : http
        guard let setting, let host = url.host(percentEncoded: false), !noProxy.bypasses(host: host) else {
            return .direct
        }
        switch setting {
        case .success(let server): return .proxy(server)
        case .failure(let error): return .unusable(error)
        }
    }

    /// One line per proxy in use, for the daemon's log (no passwords).
    package var summary: [String] {
        var lines: [String] = []
        for (scheme, setting) in [("http", http), ("https", https)] {
            switch setting {
            case .success(let server): lines.append("\(scheme) transfers go through \(server)")
            case .failure(let error): lines.append("\(scheme) transfers will fail: \(error)")
            case nil: break
            }
        }
        if !lines.isEmpty, !noProxy.isEmpty { lines.append("hosts matching no_proxy go direct") }
        return lines
    }
}
