package import FoundationEssentials

/// Redirects, followed by hauld itself rather than by the HTTP client, so that every hop is checked as a client's URL
/// is (a `Location` with port 65536 once reached a trap in the HTTP stack) and credentials stay with their origin.
package enum Redirect {
    /// The most hops one attempt follows.
    package static let maximumHops = 10

    /// Whether a response with `status` asks to be followed (when it names a `Location`).
    package static func isRedirect(_ status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// Where a response sends its request on: its `Location`, when its status is one to follow.
    package static func location(status: Int, headers: [(String, String)]) -> String? {
        isRedirect(status) ? HTTPResume.headerValue("Location", in: headers) : nil
    }

    /// The URL `location` points at, resolved against `current` and checked as ``TransferURL`` checks a client's URL.
    ///
    /// A target that cannot be used fails the transfer for good: an HTTP failure with the redirect's status and a
    /// message naming the target (its password removed).
    package static func target(status: Int, location: String, from current: URL) throws(TransferFailure) -> TransferURL {
        let shown = TransferURL.redacted(location)
        func refused(_ why: String) -> TransferFailure {
            var failure = TransferFailure.http(status: status)
            failure.message += " redirects to '\(shown)', which cannot be followed: \(why)"
            failure.isTransient = false
            return failure
        }
        guard !location.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw refused("it contains control characters")
        }
        guard let resolved = URL(string: location, relativeTo: current)?.absoluteURL else {
            throw refused("it is not a URL")
        }
        do {
            return try TransferURL(resolved.absoluteString)
        } catch {
            throw refused(error.description)
        }
    }

    /// Whether a request to `url` may carry the credentials meant for `origin`'s server: same scheme, host and port,
    /// as curl decides since CVE-2018-1000007 (an `Authorization` header must not follow a redirect elsewhere).
    package static func sameOrigin(_ url: URL, _ origin: URL) -> Bool {
        url.scheme?.lowercased() == origin.scheme?.lowercased()
            && url.host()?.lowercased() == origin.host()?.lowercased()
            && effectivePort(url) == effectivePort(origin)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
