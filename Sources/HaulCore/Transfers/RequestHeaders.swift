package import FoundationEssentials

/// The headers of one request of a transfer: the client's own, plus HTTP Basic from the URL's userinfo, minus every
/// credential when the request goes to another origin than the client's URL.
package enum RequestHeaders {
    /// Headers that carry credentials or session state and so never go to another origin.
    static let credentialNames: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The headers for a request to `url`, a hop of a transfer the client asked for at `origin`.
    ///
    /// `https://user:password@host/` authenticates with HTTP Basic as curl does, unless the client gave an
    /// `Authorization` header of its own, which wins.
    package static func forRequest(to url: URL, origin: URL, clientHeaders: [String: String]) -> [(String, String)] {
        guard Redirect.sameOrigin(url, origin) else {
            return clientHeaders.filter { !credentialNames.contains($0.key.lowercased()) }.map { ($0.key, $0.value) }
        }
        var headers = clientHeaders.map { ($0.key, $0.value) }
        if let basic = basicAuthorization(origin), !clientHeaders.keys.contains(where: { $0.lowercased() == "authorization" }) {
            headers.append(("Authorization", basic))
        }
        return headers
    }

    /// `Basic base64(user:password)` from the URL's percent-decoded userinfo, if it has a user.
    static func basicAuthorization(_ url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let user = components.user, !user.isEmpty
        else { return nil }
        let credentials = "\(user):\(components.password ?? "")"
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// `url` without its userinfo: what goes on the wire, where credentials travel in headers.
    package static func withoutUserinfo(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.user != nil || components.password != nil
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }
}
