import Foundation
import HaulTestSupport
import Testing

/// The HTTP test server itself (`scripts/test-http-server` through `TestHTTPServer`), checked with curl.
@Suite(.timeLimit(.minutes(3))) struct TestHTTPServerTests {
    /// What one curl run got.
    struct Fetched {
        /// curl's exit status (0, or 18 partial file, 28 timeout, 56 receive error, …).
        let exit: Int32
        /// The last response's status code (0 when none arrived).
        let code: Int
        /// The last response's headers, names in lower case.
        let headers: [String: String]
        let file: URL
        let stderr: String

        var size: Int { (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0 }
        var text: String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        func sha256() async throws -> String { try await TestHTTPServer.sha256(ofFile: file) }
    }

    /// A server and a scratch folder for one test.
    struct Context {
        let server: TestHTTPServer
        let directory: URL
        /// The authority of a server that serves https.
        var certificates: TestCertificates?

        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

        /// `curl -s` of `pathAndQuery` into the scratch folder, with `arguments` added.
        func curl(_ pathAndQuery: String, _ arguments: [String] = [], name: String = UUID().uuidString) async throws -> Fetched {
            let body = file(name)
            let headers = file(name + ".headers")
            let result = try await Command.run(
                "curl",
                ["-s", "--noproxy", "*", "--max-time", "20", "-o", body.path, "-D", headers.path, "-w", "%{http_code}"]
                    + (certificates.map { ["--cacert", $0.authority.path] } ?? []) + arguments
                    + [server.url(pathAndQuery)]
            )
            // Only the last response (after a 100 Continue or a followed redirect) counts.
            let dump = (try? String(contentsOf: headers, encoding: .utf8)) ?? ""
            var fields: [String: String] = [:]
            for line in dump.components(separatedBy: "\r\n") {
                if line.hasPrefix("HTTP/") {
                    fields = [:]
                } else if let colon = line.firstIndex(of: ":") {
                    fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            if !FileManager.default.fileExists(atPath: body.path) {
                _ = FileManager.default.createFile(atPath: body.path, contents: nil)
            }
            return Fetched(
                exit: result.status, code: Int(result.stdout) ?? 0, headers: fields, file: body, stderr: result.stderr
            )
        }
    }

    /// A server, serving https when `tls`, and a scratch folder.
    func withServer(root: Bool = false, tls: Bool = false, _ body: (Context) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-http-test-\(UUID().uuidString)")
        let rootDirectory = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: rootDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = tls ? try await TestCertificates.make() : nil
        defer { certificates?.remove() }
        let server = try await TestHTTPServer(root: root ? rootDirectory : nil, tls: certificates)
        defer { server.stop() }
        try await body(Context(server: server, directory: directory, certificates: certificates))
        #expect(server.errors.isEmpty, "server stderr: \(server.errors)")
    }

    @Test func generatedContentMatchesItsSHA256() async throws {
        try await withServer { context in
            let path = "/gen/300000?seed=7"  // several 64 KiB generator blocks
            let got = try await context.curl(path)
            #expect(got.exit == 0 && got.code == 200)
            #expect(got.size == 300_000)
            #expect(got.headers["content-length"] == "300000")
            #expect(got.headers["accept-ranges"] == "bytes")
            #expect(got.headers["etag"] == "\"gen-300000-7\"")
            #expect(got.headers["last-modified"] == "Mon, 01 Jan 2001 00:00:07 GMT")
            #expect(got.headers["transfer-encoding"] == nil)
            let expected = try await TestHTTPServer.sha256OfGenerated(size: 300_000, seed: 7)
            #expect(try await got.sha256() == expected)
            #expect(try await context.server.sha256(path) == expected)
            // Another seed, other bytes; the offline generator writes the same bytes as the server.
            #expect(try await context.server.sha256("/gen/300000?seed=8") != expected)
            let local = context.file("local")
            try await TestHTTPServer.writeGenerated(size: 300_000, seed: 7, to: local)
            #expect(try Data(contentsOf: local) == Data(contentsOf: got.file))
            // Size suffixes: k and m are KiB and MiB.
            let kib = try await context.curl("/gen/2k?seed=1")
            #expect(kib.size == 2048)
        }
    }

    @Test func filesAreServedFromTheRoot() async throws {
        try await withServer(root: true) { context in
            let original = context.directory.appendingPathComponent("root/data.bin")
            try Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: original)
            let got = try await context.curl("/files/data.bin")
            #expect(got.exit == 0 && got.code == 200 && got.size == 150_000)
            let expected = try await TestHTTPServer.sha256(ofFile: original)
            #expect(try await got.sha256() == expected)
            #expect(try await context.server.sha256("/files/data.bin") == expected)
            #expect(got.headers["etag"]?.hasPrefix("\"file-150000-") == true)
            #expect(got.headers["last-modified"] != nil)
            #expect(try await context.curl("/files/missing").code == 404)
            // Nothing outside the root.
            try Data("secret".utf8).write(to: context.file("secret"))
            #expect(try await context.curl("/files/../secret", ["--path-as-is"]).code == 404)
            #expect(try await context.curl("/files/%2E%2E/secret", ["--path-as-is"]).code == 404)
            #expect(try await context.curl("/files/../root/data.bin", ["--path-as-is"]).code == 200)
        }
    }

    @Test func rangesAnswer206() async throws {
        try await withServer { context in
            let path = "/gen/100000?seed=3"
            let tail = try await context.curl(path, ["-H", "Range: bytes=1000-"])
            #expect(tail.code == 206)
            #expect(tail.headers["content-range"] == "bytes 1000-99999/100000")
            #expect(tail.headers["content-length"] == "99000")
            #expect(try await tail.sha256() == TestHTTPServer.sha256OfGenerated(size: 100_000, seed: 3, range: 1000...99_999))

            let middle = try await context.curl(path, ["-H", "Range: bytes=10-19"])
            #expect(middle.code == 206 && middle.size == 10)
            #expect(middle.headers["content-range"] == "bytes 10-19/100000")
            #expect(try await middle.sha256() == TestHTTPServer.sha256OfGenerated(size: 100_000, seed: 3, range: 10...19))

            let suffix = try await context.curl(path, ["-H", "Range: bytes=-100"])
            #expect(suffix.code == 206 && suffix.headers["content-range"] == "bytes 99900-99999/100000")

            let beyond = try await context.curl(path, ["-H", "Range: bytes=99990-200000"])
            #expect(beyond.code == 206 && beyond.headers["content-range"] == "bytes 99990-99999/100000")

            let multiple = try await context.curl(path, ["-H", "Range: bytes=0-1,5-6"])
            #expect(multiple.code == 200 && multiple.size == 100_000)
        }
    }

    @Test func ifRangeHonoursOnlyTheCurrentValidator() async throws {
        try await withServer { context in
            let path = "/gen/50000?seed=4"
            let range = ["-H", "Range: bytes=100-"]
            let etag = try await context.curl(path, range + ["-H", "If-Range: \"gen-50000-4\""])
            #expect(etag.code == 206 && etag.size == 49_900)
            let date = try await context.curl(path, range + ["-H", "If-Range: Mon, 01 Jan 2001 00:00:04 GMT"])
            #expect(date.code == 206 && date.size == 49_900)
            let other = try await context.curl(path, range + ["-H", "If-Range: \"gen-50000-5\""])
            #expect(other.code == 200 && other.size == 50_000 && other.headers["content-range"] == nil)
            let weak = try await context.curl(path, range + ["-H", "If-Range: W/\"gen-50000-4\""])
            #expect(weak.code == 200 && weak.size == 50_000)
            let otherDate = try await context.curl(path, range + ["-H", "If-Range: Mon, 01 Jan 2001 00:00:05 GMT"])
            #expect(otherDate.code == 200 && otherDate.size == 50_000)
        }
    }

    @Test func unsatisfiableRangeIs416() async throws {
        try await withServer { context in
            let got = try await context.curl("/gen/1000?seed=1", ["-H", "Range: bytes=1000-"])
            #expect(got.code == 416)
            #expect(got.headers["content-range"] == "bytes */1000")
            let stats = try await context.server.stats()
            #expect(stats.bytesSent("/gen/1000?seed=1") == 0)
            #expect(stats.log("/gen/1000?seed=1").map(\.status) == [416])
        }
    }

    @Test func ignoreRangeSendsTheWholeBody() async throws {
        try await withServer { context in
            let path = "/gen/20000?seed=2&ignore-range=1"
            let got = try await context.curl(path, ["-H", "Range: bytes=5000-"])
            #expect(got.code == 200 && got.size == 20_000)
            #expect(got.headers["content-range"] == nil)
            #expect(got.headers["accept-ranges"] == nil)
            #expect(try await got.sha256() == TestHTTPServer.sha256OfGenerated(size: 20_000, seed: 2))
            let stats = try await context.server.stats()
            #expect(stats.ranges(path) == ["bytes=5000-"])
            #expect(stats.bytesSent(path) == 20_000)
        }
    }

    @Test func rangeCapEndsPartialResponsesEarly() async throws {
        try await withServer { context in
            let path = "/gen/20000?seed=2&range-cap=3000"
            let capped = try await context.curl(path, ["-H", "Range: bytes=5000-"])
            #expect(capped.code == 206 && capped.size == 3000)
            #expect(capped.headers["content-range"] == "bytes 5000-7999/20000")
            #expect(try await capped.sha256() == TestHTTPServer.sha256OfGenerated(size: 20_000, seed: 2, range: 5000...7999))
            let whole = try await context.curl(path)
            #expect(whole.code == 200 && whole.size == 20_000)
        }
    }

    @Test func etagChangesOnEveryRequest() async throws {
        try await withServer { context in
            let path = "/gen/20000?seed=2&etag-changes=1"
            let first = try await context.curl(path)
            let second = try await context.curl(path)
            let firstTag = try #require(first.headers["etag"])
            #expect(second.headers["etag"] != firstTag)
            #expect(second.headers["last-modified"] != first.headers["last-modified"])
            #expect(try await second.sha256() == first.sha256())  // the bytes stay the same
            let resumed = try await context.curl(path, ["-H", "Range: bytes=100-", "-H", "If-Range: \(firstTag)"])
            #expect(resumed.code == 200 && resumed.size == 20_000)
            // Without If-Range the Range is still honoured.
            let plain = try await context.curl(path, ["-H", "Range: bytes=100-"])
            #expect(plain.code == 206 && plain.size == 19_900)
        }
    }

    @Test func resetAfterThenTheRetryResumes() async throws {
        try await withServer { context in
            let path = "/gen/100000?seed=5&reset-after=5000"
            let first = try await context.curl(path, name: "part")
            #expect(first.exit == 56 || first.exit == 18, "curl: \(first.exit) \(first.stderr)")
            #expect(first.code == 200)
            let got = first.size
            #expect(got == 5000)

            let rest = try await context.curl(path, ["-H", "Range: bytes=\(got)-"], name: "rest")
            #expect(rest.exit == 0 && rest.code == 206)
            var whole = try Data(contentsOf: first.file)
            whole.append(try Data(contentsOf: rest.file))
            let joined = context.file("joined")
            try whole.write(to: joined)
            #expect(try await TestHTTPServer.sha256(ofFile: joined) == TestHTTPServer.sha256OfGenerated(size: 100_000, seed: 5))

            let stats = try await context.server.stats()
            #expect(stats.requests(path) == 2)
            #expect(stats.bytesSent(path) == 100_000)  // no byte sent twice
            #expect(stats.ranges(path) == ["bytes=5000-"])
            #expect(stats.log(path).map(\.outcome) == ["reset", "complete"])
            #expect(stats.log(path).map(\.bytesSent) == [5000, 95_000])

            // reset-times=2: two resets, then the whole body; another id, other counters.
            let twice = "/gen/1000?seed=5&reset-after=10&reset-times=2&id=twice"
            #expect(try await context.curl(twice).exit != 0)
            #expect(try await context.curl(twice).exit != 0)
            let third = try await context.curl(twice)
            #expect(third.exit == 0 && third.size == 1000)
        }
    }

    @Test func failThenSucceed() async throws {
        try await withServer { context in
            let path = "/gen/3000?seed=6&fail=503&fail-times=2&retry-after=7"
            for _ in 0..<2 {
                let failed = try await context.curl(path)
                #expect(failed.code == 503)
                #expect(failed.headers["retry-after"] == "7")
            }
            let served = try await context.curl(path)
            #expect(served.code == 200 && served.size == 3000)
            #expect(served.headers["retry-after"] == nil)
            let stats = try await context.server.stats()
            #expect(stats.log(path).map(\.status) == [503, 503, 200])
            #expect(stats.bytesSent(path) == 3000)  // failure bodies are not content

            let limited = try await context.curl("/gen/10?fail=429")
            #expect(limited.code == 429 && limited.headers["retry-after"] == nil)
            // A HEAD has counters of its own.
            let head = try await context.curl("/gen/10?fail=500&id=h", ["-I"])
            #expect(head.code == 500)
            #expect(try await context.curl("/gen/10?fail=500&id=h").code == 500)
            #expect(try await context.curl("/gen/10?fail=500&id=h").code == 200)
        }
    }

    @Test func stallMakesTheClientTimeOut() async throws {
        try await withServer { context in
            let path = "/gen/100000?seed=8&stall-after=1000"
            let started = ContinuousClock.now
            let got = try await context.curl(path, ["--max-time", "2"])
            let elapsed = ContinuousClock.now - started
            #expect(got.exit == 28)
            #expect(got.size == 1000)
            #expect(elapsed >= .milliseconds(1900))
            let stats = try await context.server.stats { $0.log(path).first?.outcome == "client-closed" }
            #expect(stats.log(path).map(\.outcome) == ["client-closed"])
            #expect(stats.bytesSent(path) == 1000)

            // A short stall only delays the body; the next request is not stalled (stall-times defaults to 1).
            let short = "/gen/100000?seed=8&stall-after=1000&stall-seconds=0.3"
            let slow = ContinuousClock.now
            let paused = try await context.curl(short)
            #expect(paused.exit == 0 && paused.size == 100_000)
            #expect(ContinuousClock.now - slow >= .milliseconds(280))
            #expect(try await paused.sha256() == TestHTTPServer.sha256OfGenerated(size: 100_000, seed: 8))
            #expect(try await context.curl(short, ["--max-time", "2"]).exit == 0)
        }
    }

    @Test func throttlePacesTheBody() async throws {
        try await withServer { context in
            let started = ContinuousClock.now
            let got = try await context.curl("/gen/20000?seed=9&throttle=40000")
            #expect(got.exit == 0 && got.size == 20_000)
            #expect(ContinuousClock.now - started >= .milliseconds(400))
        }
    }

    /// A paced response notices its client leave while it waits, as nginx does, not at its next write: the bench's
    /// count of transfers at the server at once (`most_in_flight`) must not hold attempts hauld already stopped. Over
    /// TLS the client's close_notify comes before its FIN.
    @Test(arguments: [false, true]) func aPacedResponseEndsWhenItsClientLeaves(tls: Bool) async throws {
        try await withServer(tls: tls) { context in
            // One byte a second: the first goes at once, the second would go a second later.
            let path = "/gen/100?seed=10&throttle=1"
            let got = try await context.curl(path, ["--max-time", "0.5"])
            #expect(got.exit == 28 && got.size == 1)
            let stats = try await context.server.stats { $0.log(path).first?.outcome == "client-closed" }
            #expect(stats.log(path).map(\.outcome) == ["client-closed"])
            #expect(stats.bytesSent(path) == 1)
        }
    }

    @Test func statusAlwaysAnswersThatStatus() async throws {
        try await withServer { context in
            for _ in 0..<2 {
                let got = try await context.curl("/gen/10?status=404")
                #expect(got.code == 404)
                #expect(!got.text.isEmpty)
            }
            #expect(try await context.curl("/nowhere").code == 404)
        }
    }

    @Test func chunkedAndCloseDelimitedBodies() async throws {
        try await withServer { context in
            let expected = try await TestHTTPServer.sha256OfGenerated(size: 100_000, seed: 10)
            let chunked = try await context.curl("/gen/100000?seed=10&chunked=1")
            #expect(chunked.exit == 0 && chunked.headers["transfer-encoding"] == "chunked")
            #expect(chunked.headers["content-length"] == nil)
            #expect(try await chunked.sha256() == expected)

            let unframed = try await context.curl("/gen/100000?seed=10&no-length=1")
            #expect(unframed.exit == 0 && unframed.headers["content-length"] == nil)
            #expect(unframed.headers["connection"] == "close")
            #expect(try await unframed.sha256() == expected)

            let cut = try await context.curl("/gen/100000?seed=10&close-after=10")
            #expect(cut.exit == 18 && cut.size == 10)
            let stats = try await context.server.stats()
            #expect(stats.log("/gen/100000?seed=10&close-after=10").map(\.outcome) == ["closed"])
        }
    }

    @Test func redirectPointsAtTheTarget() async throws {
        try await withServer { context in
            let hop = try await context.curl("/redirect/302/gen/100?seed=1")
            #expect(hop.code == 302 && hop.headers["location"] == "/gen/100?seed=1")
            let followed = try await context.curl("/redirect/301/gen/100?seed=1", ["-L"])
            #expect(followed.code == 200 && followed.size == 100)
        }
    }

    @Test func connectTunnelsToLoopbackOnly() async throws {
        try await withServer { context in
            let origin = try await TestHTTPServer()
            defer { origin.stop() }
            let proxy = "http://127.0.0.1:\(context.server.port)"
            let body = context.file("tunnelled")
            let tunnelled = try await Command.run(
                "curl", ["-s", "-p", "-x", proxy, "-U", "u:p", "-o", body.path, "-w", "%{http_connect} %{http_code}",
                         origin.url("/gen/5000?seed=3")]
            )
            #expect(tunnelled.status == 0 && tunnelled.stdout == "200 200")
            #expect(try await TestHTTPServer.sha256(ofFile: body) == TestHTTPServer.sha256OfGenerated(size: 5000, seed: 3))
            #expect(try await origin.stats().requests("/gen/5000?seed=3") == 1)

            // Never beyond loopback: the name is not even resolved.
            let refused = try await Command.run(
                "curl", ["-s", "-p", "-x", proxy, "-o", "/dev/null", "-w", "%{http_connect}", "http://example.test/"]
            )
            #expect(refused.status != 0 && refused.stdout == "403")
            let tunnels = try await context.server.stats().tunnels
            #expect(tunnels.map(\.target) == ["127.0.0.1:\(origin.port)", "example.test:80"])
            #expect(tunnels.map(\.status) == [200, 403])
            #expect(tunnels.first?.proxyAuthorization == "Basic " + Data("u:p".utf8).base64EncodedString())
        }
    }

    @Test func uploadsAreStoredAndHashed() async throws {
        try await withServer { context in
            let source = context.file("source")
            try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: source)
            let expected = try await TestHTTPServer.sha256(ofFile: source)

            let put = try await context.curl("/upload/put.bin", ["-T", source.path])
            #expect(put.code == 201)
            #expect(put.headers["x-received-sha256"] == expected)
            let receipt = try JSONSerialization.jsonObject(with: Data(contentsOf: put.file)) as? [String: Any]
            #expect(receipt?["sha256"] as? String == expected)
            #expect(receipt?["bytes"] as? Int == 200_000)
            #expect(receipt?["method"] as? String == "PUT")

            let post = try await context.curl("/upload/post.bin", ["--data-binary", "@\(source.path)"])
            #expect(post.code == 200 && post.headers["x-received-sha256"] == expected)

            let chunked = try await context.curl(
                "/upload/chunked.bin", ["-H", "Transfer-Encoding: chunked", "--data-binary", "@\(source.path)"]
            )
            #expect(chunked.code == 200 && chunked.headers["x-received-sha256"] == expected)

            let back = try await context.curl("/uploads/chunked.bin")
            #expect(try await back.sha256() == expected)
            #expect(try await context.server.sha256("/uploads/put.bin") == expected)
            let stored = context.server.uploadDirectory.appendingPathComponent("post.bin")
            #expect(try await TestHTTPServer.sha256(ofFile: stored) == expected)

            // Interrupted once after 1000 bytes, then accepted.
            let flaky = "/upload/flaky.bin?reset-after=1000"
            #expect(try await context.curl(flaky, ["--data-binary", "@\(source.path)"]).exit != 0)
            #expect(try await context.curl(flaky, ["--data-binary", "@\(source.path)"]).code == 200)

            let stats = try await context.server.stats()
            #expect(stats.uploads("/upload/put.bin").map(\.method) == ["PUT"])
            #expect(stats.uploads("/upload/post.bin").map(\.method) == ["POST"])
            #expect(stats.uploads("/upload/chunked.bin").first?.chunked == true)
            #expect(stats.uploads("/upload/chunked.bin").first?.sha256 == expected)
            #expect(stats.uploads(flaky).map(\.outcome) == ["reset", "complete"])
            #expect(stats.uploads(flaky).first?.bytes == 1000)
            #expect(stats.uploads(flaky).last?.status == 200)
        }
    }

    @Test func statsCountRequestsBytesAndRanges() async throws {
        try await withServer { context in
            let path = "/gen/10000?seed=11"
            _ = try await context.curl(path)
            _ = try await context.curl(path, ["-H", "Range: bytes=4000-"])
            _ = try await context.curl(path, ["-I"])
            // Both URLs on one curl command line share a keep-alive connection.
            let keepAlive = try await Command.run(
                "curl", ["-s", "--noproxy", "*", "-o", "/dev/null", "-o", "/dev/null",
                         context.server.url("/gen/10?id=a"), context.server.url("/gen/10?id=b")]
            )
            #expect(keepAlive.status == 0)

            let stats = try await context.server.stats()
            #expect(stats.requests(path) == 3)
            #expect(stats.requests(path, method: "GET") == 2)
            #expect(stats.requests(path, method: "HEAD") == 1)
            #expect(stats.bytesSent(path) == 16_000)
            #expect(stats.ranges(context.server.url(path)) == ["bytes=4000-"])  // full URLs work as keys
            #expect(stats.log(path).map(\.status) == [200, 206, 200])
            #expect(stats.log("/gen/10?id=a").first?.connection == stats.log("/gen/10?id=b").first?.connection)
            #expect(stats.requests("/never") == 0 && stats["/never"] == nil)

            try await context.server.resetStats()
            #expect(try await context.server.stats().paths.isEmpty)
        }
    }

    @Test func listensOnLoopbackOnly() async throws {
        try await withServer { context in
            let port = context.server.port
            let listening = try TCPSocketTable(path: "/proc/net/tcp").sockets.filter { $0.listens(on: port) }
            #expect(listening.map(\.localAddress) == ["0100007F:" + String(format: "%04X", port)])
            let ipv6 = (try? TCPSocketTable(path: "/proc/net/tcp6").sockets) ?? []
            #expect(!ipv6.contains { $0.listens(on: port) })
        }
    }

    @Test func stopClosesThePort() async throws {
        let server = try await TestHTTPServer()
        let url = server.url("/gen/10")
        #expect(try await Command.run("curl", ["-s", "--noproxy", "*", "-o", "/dev/null", url]).status == 0)
        server.stop()
        server.stop()
        #expect(try await Command.run("curl", ["-s", "--noproxy", "*", "-o", "/dev/null", url]).status == 7)
    }
}
