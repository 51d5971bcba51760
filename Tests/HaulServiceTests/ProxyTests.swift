import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Proxies from hauld's environment, through a second test server acting as the proxy (loopback only): plain http
/// as an absolute-form request, https through a CONNECT tunnel, as curl does.
@Suite(.timeLimit(.minutes(2))) struct ProxyTests {
    static let once: [DownloadOption: DBusValue] = [.maxRetries: .uint32(0)]

    /// The proxy allows CONNECT to port 443 only, as Debian's stock squid does: plain http must not need it.
    @Test func plainHTTPGoesAsAnAbsoluteFormRequestUnlessNoProxySaysOtherwise() async throws {
        let proxy = try await TestHTTPServer(arguments: ["--connect-ports", "443"])
        defer { proxy.stop() }
        let environment = ["http_proxy": "http://alice:s%3Acret@\(proxy.authority)", "no_proxy": "localhost"]
        try await TransferFixture.with(environment: environment) { f throws in
            let query = "/gen/1m?seed=41"
            let proxied = try await f.download(query, to: "proxied.bin")
            try await f.wait(proxied, until: .completed)
            #expect(try await f.errorName(proxied) == "")
            #expect(try await f.sha256(of: "proxied.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 41)))
            let stats = try await proxy.stats()
            #expect(stats.tunnels.isEmpty)
            #expect(stats.forwarded.map(\.target) == [f.server.url(query)])
            #expect(stats.forwarded.first?.proxyAuthorization == "Basic " + Data("alice:s:cret".utf8).base64EncodedString())
            #expect(try await f.server.stats().requests(query) == 1, "the server answered through the proxy")

            // localhost is in no_proxy: straight to the server.
            let reply = try await f.managerCall(
                .download, [.string("http://localhost:\(f.server.port)/gen/10k?seed=42"), .string(f.file("direct.bin"))]
            )
            let direct = try #require(reply.first?.objectPathValue)
            try await f.wait(direct, until: .completed)
            #expect(try await f.errorName(direct) == "")
            #expect(try await f.server.stats().requests("/gen/10k?seed=42") == 1)
            #expect(try await proxy.stats().forwarded.count == 1)
        }
    }

    @Test func uploadsAndResumesGoThroughTheProxyToo() async throws {
        let proxy = try await TestHTTPServer(arguments: ["--connect-ports", "443"])
        defer { proxy.stop() }
        try await TransferFixture.with(environment: ["http_proxy": "http://\(proxy.authority)"]) { f throws in
            let query = "/gen/1m?seed=44&reset-after=300000"
            let task = try await f.download(query, to: "resumed.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.server.stats().ranges(query) == ["bytes=300000-"])
            #expect(try await f.sha256(of: "resumed.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 44)))

            let source = f.folder.appendingPathComponent("resumed.bin")
            let reply = try await f.managerCall(
                .upload, [.string(f.server.url("/upload/up.bin")), .string(source.path)]
            )
            let upload = try #require(reply.first?.objectPathValue)
            try await f.wait(upload, until: .completed)
            #expect(try await f.errorName(upload) == "")
            #expect(try await f.property(upload, .bytesSent) == .uint64(1 << 20))
            #expect(try await f.server.stats().uploads("/upload/up.bin").first?.sha256 == (try await f.sha256(of: "resumed.bin")))
            #expect(try await proxy.stats().forwarded.map(\.method) == ["GET", "GET", "PUT"])
        }
    }

    /// hauld on a private bus with `https_proxy` naming a test server run with `proxyArguments`, and an https server
    /// it trusts behind that proxy.
    static func withHTTPSProxy(
        proxyArguments: [String] = [], _ body: (TransferFixture, TestHTTPServer, TestHTTPServer) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await TestHTTPServer(tls: certificates)
        defer { server.stop() }
        let proxy = try await TestHTTPServer(arguments: proxyArguments)
        defer { proxy.stop() }
        let environment = ["https_proxy": "http://\(proxy.authority)", "SSL_CERT_FILE": certificates.authority.path]
        try await TransferFixture.with(environment: environment) { f throws in try await body(f, server, proxy) }
    }

    @Test func httpsTunnelsThroughTheProxy() async throws {
        try await Self.withHTTPSProxy { f, server, proxy throws in
            let reply = try await f.managerCall(
                .download, [.string(server.url("/gen/100k?seed=45")), .string(f.file("secure.bin"))]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await proxy.stats().tunnels.map(\.target) == [server.authority])
        }
    }

    /// Downloads over several connections through the proxy open one tunnel per connection and reuse them, one
    /// download after another. A request pinned to an event loop (as a segmented download's connections are to
    /// share one) is given only a connection of that loop, so each download opened tunnels of its own.
    @Test func segmentedDownloadsReuseTheirTunnels() async throws {
        try await Self.withHTTPSProxy { f, server, proxy throws in
            for seed in 47...49 {
                let query = "/gen/8m?seed=\(seed)"
                let reply = try await f.managerCall(
                    .downloadWithOptions,
                    [
                        .string(server.url(query)), .string(f.file("\(seed).bin")),
                        .vardict(DownloadOption.values([.connections: .uint32(4)])),
                    ]
                )
                let task = try #require(reply.first?.objectPathValue)
                try await f.wait(task, until: .completed)
                #expect(try await f.errorName(task) == "")
                #expect(try await f.sha256(of: "\(seed).bin") == (try await TestHTTPServer.sha256OfGenerated(size: 8 << 20, seed: seed)))
                #expect(try await server.stats().log(query).count >= 4, "a range on each connection")
            }
            let tunnels = try await proxy.stats().tunnels
            #expect(tunnels.allSatisfy { $0.target == server.authority && $0.status == 200 })
            // Four connections at once need four tunnels; twelve were opened before, one set per download.
            #expect((4...5).contains(tunnels.count), "\(tunnels.count) tunnels for three downloads")
        }
    }

    /// A proxy's refusal is its answer, not a network hiccup: the task ends at once and says what the proxy said.
    @Test func aProxysRefusalEndsTheTaskAndSaysWhatItAnswered() async throws {
        try await Self.withHTTPSProxy(proxyArguments: ["--connect-ports", "443"]) { f, server, proxy throws in
            let reply = try await f.managerCall(
                .downloadWithOptions,
                [
                    .string(server.url("/gen/1k")), .string(f.file("refused.bin")),
                    .vardict(DownloadOption.values([.maxRetries: .uint32(3)])),
                ]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed, timeout: .seconds(10))
            #expect(try await f.errorName(task) == HaulErrorName.network.fullName)
            let message = try await f.property(task, .errorMessage).stringValue ?? ""
            #expect(message.contains("the proxy \(proxy.authority)") && message.contains("403 Forbidden"), "\(message)")
            #expect(try await proxy.stats().tunnels.filter { $0.status == 403 }.count <= 2, "no retries")
        }
    }

    @Test func aProxyAskingForCredentialsEndsTheTask() async throws {
        let proxy = try await TestHTTPServer(arguments: ["--proxy-auth", "bob:pw"])
        defer { proxy.stop() }
        try await TransferFixture.with(environment: ["http_proxy": "http://\(proxy.authority)"]) { f throws in
            let task = try await f.download("/gen/1k?seed=46", to: "denied.bin", options: [.maxRetries: .uint32(3)])
            try await f.wait(task, until: .completed, timeout: .seconds(10))
            #expect(try await f.errorName(task) == HaulErrorName.http.fullName)
            #expect(try await f.property(task, .httpStatus) == .uint32(407))
            #expect(try await proxy.stats().forwarded.count == 1, "a 407 is not retried")
        }
    }

    /// Debian's stock squid, the real thing: plain http goes through as curl sends it, and its refusal of a tunnel
    /// to another port than 443 ends an https task at once, saying so.
    @Test func aStockSquidCarriesPlainHTTPAndItsRefusalIsReported() async throws {
        let squid = try await SquidProxy()
        defer { squid.stop() }
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let secure = try await TestHTTPServer(tls: certificates)
        defer { secure.stop() }
        let environment = [
            "http_proxy": "http://\(squid.authority)", "https_proxy": "http://\(squid.authority)",
            "SSL_CERT_FILE": certificates.authority.path,
        ]
        try await TransferFixture.with(environment: environment) { f throws in
            let query = "/gen/2m?seed=47"
            let plain = try await f.download(query, to: "squid.bin")
            try await f.wait(plain, until: .completed)
            #expect(try await f.errorName(plain) == "")
            #expect(try await f.sha256(of: "squid.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 2 << 20, seed: 47)))
            // squid logs the absolute-form request (without its query, as it strips them from logs).
            #expect(squid.accessLog.contains("TCP_MISS/200"), "\(squid.accessLog)")
            #expect(squid.accessLog.contains("GET \(f.server.url("/gen/2m"))"), "\(squid.accessLog)")

            let reply = try await f.managerCall(
                .downloadWithOptions,
                [
                    .string(secure.url("/gen/1k")), .string(f.file("tunnel.bin")),
                    .vardict(DownloadOption.values([.maxRetries: .uint32(3)])),
                ]
            )
            let tunnel = try #require(reply.first?.objectPathValue)
            try await f.wait(tunnel, until: .completed)
            #expect(try await f.errorName(tunnel) == HaulErrorName.network.fullName)
            let message = try await f.property(tunnel, .errorMessage).stringValue ?? ""
            #expect(message.contains("the proxy \(squid.authority)") && message.contains("403"), "\(message)")
            #expect(squid.accessLog.contains("TCP_DENIED/403"))
        }
    }

    @Test func anUnusableProxyFailsTheTaskRatherThanGoingAroundIt() async throws {
        try await TransferFixture.with(environment: ["http_proxy": "https://127.0.0.1:1"]) { f throws in
            let task = try await f.download("/gen/1k?seed=43", to: "never.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == HaulErrorName.network.fullName)
            #expect(try await f.property(task, .errorMessage).stringValue?.contains("http_proxy") == true)
            #expect(try await f.server.stats().requests("/gen/1k?seed=43") == 0)
        }
    }
}
