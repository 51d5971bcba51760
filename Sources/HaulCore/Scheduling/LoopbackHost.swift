import FoundationEssentials
import Glibc

/// Which hosts are loopback for the network rules: a transfer to one never waits for the network, a non-metered
/// network or mains power, since it never leaves the machine.
///
/// Judged on the host as written in the URL, never on what it resolves to, so that two correct implementations
/// agree: `localhost` (in any ASCII case), an IPv4 address in 127.0.0.0/8 written as four decimal parts, and the
/// IPv6 address ::1 in any of its spellings (`::1`, `0:0:0:0:0:0:0:1`, with or without brackets). Anything else
/// follows the network rules — the machine's own LAN address, `localhost.`, `127.1` and `::ffff:127.0.0.1` included.
package enum LoopbackHost {
    /// Whether `host` (a URL's host, percent-decoded) names the loopback interface.
    package static func contains(_ host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") {
            name = name.dropFirst().dropLast()
        }
        // A NUL would end the C string early: "127.0.0.1\0.example" must not pass as 127.0.0.1.
        guard !name.isEmpty, !name.utf8.contains(0) else { return false }
        if name.utf8.count == 9, name.lowercased() == "localhost" {
            return true
        }
        let text = String(name)
        var ipv4 = in_addr()
        if inet_pton(AF_INET, text, &ipv4) == 1 {
            // Network byte order: the first byte in memory is the first octet.
            return withUnsafeBytes(of: ipv4) { $0.first == 127 }
        }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, text, &ipv6) == 1 {
            return withUnsafeBytes(of: ipv6) { bytes in
                bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1
            }
        }
        return false
    }
}

extension TransferURL {
    /// Whether the URL's host is loopback (see ``LoopbackHost``). Redirects do not change it: the rules follow the
    /// task's URL.
    package var isLoopback: Bool {
        LoopbackHost.contains(url.host(percentEncoded: false) ?? "")
    }
}
