import Foundation
import HaulCore
import HaulTestSupport
import Testing

/// The non-loopback test host: a network namespace with the test HTTP server, reached over a veth pair.
@Suite(.timeLimit(.minutes(3))) struct NetworkNamespaceHostTests {
    @Test func reachableOverHTTPAndGoneAfterwards() async throws {
        let before = try NetworkNamespaceHost.machineAddresses()
        let host = try await NetworkNamespaceHost()
        defer { host.stop() }
        #expect(!LoopbackHost.contains(host.address))
        #expect(!before.contains(host.address) && !before.contains(host.localAddress))
        #expect(host.server.url("/gen/1") == "http://\(host.address):\(host.server.port)/gen/1")
        #expect(NetworkNamespaceHost.namespaceExists(host.namespace))
        #expect(NetworkNamespaceHost.interfaceExists(host.interface))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("haul-netns-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let fetched = try await Self.curl(host.server.url("/gen/256k?seed=9"), to: file)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let expected = try await TestHTTPServer.sha256OfGenerated(size: 262_144, seed: 9)
        #expect(try await TestHTTPServer.sha256(ofFile: file) == expected)
        // The server saw it come from this machine's end of the pair, not over loopback.
        #expect(try await host.server.stats().requests("/gen/256k?seed=9") == 1)
        #expect(fetched.stdout == host.localAddress)

        host.stop()
        #expect(!NetworkNamespaceHost.namespaceExists(host.namespace))
        #expect(!NetworkNamespaceHost.interfaceExists(host.interface))
        #expect(try !NetworkNamespaceHost.machineAddresses().contains(host.localAddress))
        #expect(try await Self.curl(host.server.url("/gen/1"), to: file, maxTime: 2).status != 0)
    }

    @Test func hostsSideBySideGetAddressesOfTheirOwn() async throws {
        let first = try await NetworkNamespaceHost()
        defer { first.stop() }
        let second = try await NetworkNamespaceHost()
        defer { second.stop() }
        #expect(first.namespace != second.namespace && first.interface != second.interface)
        #expect(Set([first.address, first.localAddress, second.address, second.localAddress]).count == 4)
        let expected = try await TestHTTPServer.sha256OfGenerated(size: 10, seed: 1)
        #expect(try await first.server.sha256("/gen/10?seed=1") == expected)
        #expect(try await second.server.sha256("/gen/10?seed=1") == expected)
    }

    @Test func leftoversOfACrashedRunAreRemovedAndLiveOnesKept() async throws {
        let ip = try NetworkNamespaceHost.ipPath()
        // A test run that crashes: a process that leaves its namespace and veth pair behind and ends. (While it runs,
        // its process is alive, so that another test's host leaves them alone.)
        let crash = try await Command.run(
            "/bin/sh",
            [
                "-c",
                """
                set -e; name="haul-test-$$-1"; pair="haul-left$(($$ % 100000))"
                "$0" netns add "$name"; "$0" link add "$pair" type veth peer name veth0 netns "$name"
                echo "$name $pair"
                """,
                ip,
            ]
        )
        #expect(crash.status == 0, "\(crash.stderr)")
        let names = crash.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try #require(names.count == 2)
        let (crashed, pair) = (names[0], names[1])
        // Process 1 runs as long as the machine does.
        let running = "haul-test-1-\(UUID().uuidString.prefix(8))"
        #expect(try await Command.run(ip, ["netns", "add", running]).status == 0)

        // (Another test's host may have come first: it removes leftovers too.)
        NetworkNamespaceHost.removeLeftovers()
        #expect(!NetworkNamespaceHost.namespaceExists(crashed))
        #expect(NetworkNamespaceHost.namespaceExists(running))
        // The crashed run's end of its pair goes with the namespace (in the kernel's own time).
        try await waitUntil("!NetworkNamespaceHost.interfaceExists(pair)") { !NetworkNamespaceHost.interfaceExists(pair) }
        _ = try await Command.run(ip, ["netns", "delete", running])
    }

    /// curl `url` into `file`; stdout is the address curl connected from.
    static func curl(_ url: String, to file: URL, maxTime: Int = 20) async throws -> CommandResult {
        try await Command.run(
            "curl",
            ["-s", "-S", "--noproxy", "*", "--max-time", String(maxTime), "-o", file.path, "-w", "%{local_ip}", url]
        )
    }
}
