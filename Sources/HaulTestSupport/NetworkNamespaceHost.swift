package import Foundation
import Synchronization

/// A host that is not loopback, for tests of the network rules (transfers to loopback never wait for the network):
/// a network namespace of its own, `haul-test-<pid>-<n>`, reached from this machine over a veth pair, and the test
/// HTTP server running inside it. Needs root (CAP_NET_ADMIN) and `ip` (iproute2).
///
/// ```swift
/// let host = try await NetworkNamespaceHost()
/// defer { host.stop() }
/// let url = host.server.url("/gen/1m?seed=3")   // http://10.213.0.2:<port>/gen/1m?seed=3
/// ```
///
/// The addresses are a /30 of 10.213.0.0/16: this machine's end of the pair `.1`, the namespace's `.2`. A /30 that
/// overlaps any address or route the machine has is never used, and each is claimed by creating the interface
/// named after it (`haul-test<k>`), which only one process can do, so parallel tests and test runs never share one.
/// `stop()` removes the interface and the namespace; a namespace left behind by a test run that crashed (its process
/// is gone) is removed by the next host (`removeLeftovers()`), and with it its end of the veth pair.
package final class NetworkNamespaceHost: Sendable {
    /// The namespace's name, as `ip netns list` shows it.
    package let namespace: String
    /// This machine's end of the veth pair.
    package let interface: String
    /// The namespace's address: the server's host.
    package let address: String
    /// This machine's address on the veth pair.
    package let localAddress: String
    /// The test HTTP server, listening on `address` inside the namespace.
    package let server: TestHTTPServer
    private let stopped = Mutex(false)

    /// Creates the namespace and the pair, then starts the server in the namespace (serving `root` under `/files/`).
    /// Blocks the calling thread for the `ip` commands (milliseconds), then waits until the server listens.
    package init(root: URL? = nil, verbose: Bool = false) async throws {
        Self.removeLeftovers()
        let namespace = "haul-test-\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        try Self.ip(["netns", "add", namespace])
        var claimed: (interface: String, subnet: UInt32)?
        do {
            claimed = try Self.claimPair(namespace: namespace)
            guard let (interface, subnet) = claimed else { throw TestSupportError("no free /30 in 10.213.0.0/16") }
            let local = IPv4.string(subnet + 1)
            let address = IPv4.string(subnet + 2)
            try Self.ip(["addr", "add", "\(local)/30", "dev", interface])
            try Self.ip(["link", "set", interface, "up"])
            try Self.ip(["-n", namespace, "addr", "add", "\(address)/30", "dev", Self.innerInterface])
            try Self.ip(["-n", namespace, "link", "set", Self.innerInterface, "up"])
            try Self.ip(["-n", namespace, "link", "set", "lo", "up"])
            server = try await TestHTTPServer(
                root: root, verbose: verbose, host: address, launcher: [try Self.ipPath(), "netns", "exec", namespace]
            )
            self.namespace = namespace
            self.interface = interface
            self.address = address
            self.localAddress = local
        } catch {
            Self.remove(namespace: namespace, interface: claimed?.interface)
            throw error
        }
    }

    /// Stops the server, removes the veth pair and the namespace. Idempotent; also done on deinit.
    package func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        server.stop()
        Self.remove(namespace: namespace, interface: interface)
    }

    deinit { stop() }

    /// Whether the namespace still exists.
    package static func namespaceExists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "/run/netns/\(name)")
    }

    /// Whether this machine has an interface of that name.
    package static func interfaceExists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "/sys/class/net/\(name)")
    }

    /// Removes the namespaces of test runs whose process is gone (those of running processes stay); returns their
    /// names. Removing a namespace removes its end of a veth pair, and so the pair.
    @discardableResult
    package static func removeLeftovers() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
        return names.filter { name in
            let parts = name.split(separator: "-")
            guard parts.count == 4, parts[0] == "haul", parts[1] == "test", let pid = pid_t(parts[2]),
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { return false }
            return (try? ip(["netns", "delete", name])) != nil
        }
    }

    /// Every IPv4 address of this machine's interfaces (in this namespace), as `ip addr` shows them.
    package static func machineAddresses() throws -> [String] {
        try ipJSON(["-4", "addr", "show"]).flatMap { interface in
            (interface["addr_info"] as? [[String: Any]] ?? []).compactMap { $0["local"] as? String }
        }
    }

    // MARK: Internals

    /// The namespace's end of the pair, named the same in every namespace.
    private static let innerInterface = "veth0"
    private static let counter = Atomic<Int>(0)
    /// Where the next claim starts looking: past the last one, so that a pair one test has just removed is not at
    /// once another's (a test checking that its own pair is gone found a parallel test's of the same name).
    private static let nextClaim = Atomic<UInt32>(0)
    /// 10.213.0.0/16 in /30s: 16 384 candidates.
    private static let range: (base: UInt32, count: UInt32) = (10 << 24 | 213 << 16, 16384)

    /// Creates `haul-test<k>` with its peer inside `namespace`, for the first k from ``nextClaim`` on whose /30 is
    /// free; nil if none is.
    private static func claimPair(namespace: String) throws -> (interface: String, subnet: UInt32)? {
        let taken = try prefixesInUse()
        let start = nextClaim.add(1, ordering: .relaxed).oldValue
        for step in 0..<range.count {
            let index = (start &+ step) % range.count
            let subnet = range.base + index * 4
            guard !taken.contains(where: { $0.overlaps(IPv4.Prefix(address: subnet, length: 30)) }) else { continue }
            let interface = "haul-test\(index)"
            let result = try run([
                "link", "add", interface, "type", "veth", "peer", "name", innerInterface, "netns", namespace,
            ])
            if result.status == 0 { return (interface, subnet) }
            // Another test (or test run) has it: the next one.
            guard result.errors.contains("File exists") else {
                throw TestSupportError("ip link add \(interface) failed: \(result.errors)")
            }
        }
        return nil
    }

    /// The prefixes of this machine's addresses and routes (the default route aside), which no test /30 may touch.
    private static func prefixesInUse() throws -> [IPv4.Prefix] {
        let addresses = try ipJSON(["-4", "addr", "show"]).flatMap { interface in
            (interface["addr_info"] as? [[String: Any]] ?? []).compactMap { info -> IPv4.Prefix? in
                guard let local = info["local"] as? String, let address = IPv4.parse(local) else { return nil }
                return IPv4.Prefix(address: address, length: info["prefixlen"] as? Int ?? 32)
            }
        }
        let routes = try ipJSON(["-4", "route", "show", "table", "all"]).compactMap { route -> IPv4.Prefix? in
            guard let destination = route["dst"] as? String, destination != "default" else { return nil }
            return IPv4.Prefix(destination)
        }
        return addresses + routes
    }

    /// Removes the pair first: deleting a namespace frees its interfaces only later, in the kernel's own time.
    private static func remove(namespace: String, interface: String?) {
        if let interface, interfaceExists(interface) { _ = try? run(["link", "delete", interface]) }
        _ = try? run(["netns", "delete", namespace])
    }

    private static func ip(_ arguments: [String]) throws {
        let result = try run(arguments)
        guard result.status == 0 else {
            throw TestSupportError("ip \(arguments.joined(separator: " ")) failed: \(result.errors)")
        }
    }

    private static func ipJSON(_ arguments: [String]) throws -> [[String: Any]] {
        let result = try run(["-j"] + arguments)
        guard result.status == 0,
            let entries = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]]
        else { throw TestSupportError("ip -j \(arguments.joined(separator: " ")) failed: \(result.errors)") }
        return entries
    }

    /// Runs `ip`, blocking: its output is a few lines, read before it is waited for.
    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let running = try Command.start(try ipPath(), arguments)
        let output = running.stdout.readDataToEndOfFile()
        let errors = running.stderr.readDataToEndOfFile()
        let status = running.wait().status
        return (status, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    /// `ip` (iproute2).
    package static func ipPath() throws -> String {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : try Command.which("ip")
    }
}

/// IPv4 addresses as host-order integers.
private enum IPv4 {
    struct Prefix {
        let address: UInt32
        let length: Int

        init(address: UInt32, length: Int) {
            self.length = min(max(length, 0), 32)
            self.address = address & Self.mask(self.length)
        }

        /// `a.b.c.d/len` or `a.b.c.d` (a /32).
        init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let first = parts.first, let address = IPv4.parse(String(first)) else { return nil }
            let length = parts.count == 2 ? Int(parts[1]) : 32
            guard let length else { return nil }
            self.init(address: address, length: length)
        }

        func overlaps(_ other: Prefix) -> Bool {
            let mask = Self.mask(min(length, other.length))
            return address & mask == other.address & mask
        }

        static func mask(_ length: Int) -> UInt32 {
            length == 0 ? 0 : UInt32.max << (32 - length)
        }
    }

    static func parse(_ text: String) -> UInt32? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    static func string(_ address: UInt32) -> String {
        [24, 16, 8, 0].map { String(address >> $0 & 0xff) }.joined(separator: ".")
    }
}
