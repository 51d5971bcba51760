import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// Proxies from hauld's environment, through a second test server acting as a CONNECT proxy (loopback only).
@Suite(.timeLimit(.minutes(2))) struct ProxyTests {
    @Test func transfersTunnelThroughTheProxyUnlessNoProxySaysOtherwise() async throws {
        let proxy = try TestHTTPServer()
        defer { proxy.stop() }
        let environment = ["http_proxy": "http://alice:s%3Acret@127.0.0.1:\(proxy.port)", "no_proxy": "localhost"]
        try await TransferFixture.with(environment: environment) { f throws in
            let query = "/gen/1m?seed=41"
            let proxied = try await f.download(query, to: "proxied.bin")
            try await f.wait(proxied, until: "completed")
            #expect(try await f.errorName(proxied) == "")
            #expect(try await f.sha256(of: "proxied.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 41)))
            let tunnels = try await proxy.stats().tunnels
            #expect(tunnels.map(\.target) == ["127.0.0.1:\(f.server.port)"])
            #expect(tunnels.first?.status == 200)
            #expect(tunnels.first?.proxyAuthorization == "Basic " + Data("alice:s:cret".utf8).base64EncodedString())
            #expect(try await f.server.stats().requests(query) == 1, "the server answered through the tunnel")

            // localhost is in no_proxy: straight to the server.
            let reply = try await f.managerCall(
                "Download", [.string("http://localhost:\(f.server.port)/gen/10k?seed=42"), .string(f.file("direct.bin"))]
            )
            let direct = try #require(reply.first?.objectPathValue)
            try await f.wait(direct, until: "completed")
            #expect(try await f.errorName(direct) == "")
            #expect(try await f.server.stats().requests("/gen/10k?seed=42") == 1)
            #expect(try await proxy.stats().tunnels.count == 1)
        }
    }

    @Test func anUnusableProxyFailsTheTaskRatherThanGoingAroundIt() async throws {
        try await TransferFixture.with(environment: ["http_proxy": "https://127.0.0.1:1"]) { f throws in
            let task = try await f.download("/gen/1k?seed=43", to: "never.bin")
            try await f.wait(task, until: "completed")
            #expect(try await f.errorName(task) == "org.haul.Haul1.Error.Network")
            #expect(try await f.property(task, "ErrorMessage").stringValue?.contains("http_proxy") == true)
            #expect(try await f.server.stats().requests("/gen/1k?seed=43") == 0)
        }
    }
}
