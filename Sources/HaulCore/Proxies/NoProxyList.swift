#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The hosts that `no_proxy` sends around the proxy, matched as curl does.
///
/// Entries are separated by commas or white space: `*` alone matches every host; a domain (`example.com`,
/// `.example.com`, `*.example.com`) matches itself and its subdomains, not `myexample.com`; an IP address matches
/// itself and a CIDR block (`10.0.0.0/8`, `fd00::/8`) its addresses. Loopback is not special: like curl, name
/// `localhost,127.0.0.1,::1` when local servers must be reached directly.
package struct NoProxyList: Sendable, Equatable {
    enum Entry: Sendable, Equatable {
        case everything
        case domain(String)
        case network(address: [UInt8], prefixLength: Int)
    }

    let entries: [Entry]

    package init(_ value: String) {
        entries = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).compactMap {
            Self.entry(String($0))
        }
    }

    package var isEmpty: Bool { entries.isEmpty }

    /// Whether requests to `host` (a name or an IP literal, brackets allowed) go direct.
    package func bypasses(host: String) -> Bool {
        let name = Self.normalized(host)
        let address = Self.address(name)
        return entries.contains { entry in
            switch entry {
            case .everything:
                return true
            case .domain(let domain):
                return name == domain || name.hasSuffix("." + domain)
            case .network(let network, let prefixLength):
                guard let address, address.count == network.count else { return false }
                return Self.prefix(of: address, length: prefixLength) == Self.prefix(of: network, length: prefixLength)
            }
        }
    }

    private static func entry(_ text: String) -> Entry? {
        if text == "*" { return .everything }
        let (addressText, lengthText) = split(text, at: "/")
        if let address = address(normalized(addressText)) {
            let fullLength = address.count * 8
            guard let lengthText else { return .network(address: address, prefixLength: fullLength) }
            guard let length = Int(lengthText), (0...fullLength).contains(length) else { return nil }
            return .network(address: address, prefixLength: length)
        }
        var domain = normalized(text)
        if domain.hasPrefix("*.") { domain.removeFirst(2) } else if domain.hasPrefix(".") { domain.removeFirst() }
        return domain.isEmpty || lengthText != nil ? nil : .domain(domain)
    }

    private static func split(_ text: String, at separator: Character) -> (String, String?) {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (String(text[..<index]), String(text[text.index(after: index)...]))
    }

    /// Lower case, without IPv6 brackets or a trailing dot.
    private static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// The bytes of an IPv4 or IPv6 literal, else nil.
    private static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    private static func prefix(of bytes: [UInt8], length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(max(length - index * 8, 0), 8)
            return bits == 8 ? byte : byte & ~(0xFF >> UInt8(bits))
        }
    }
}
