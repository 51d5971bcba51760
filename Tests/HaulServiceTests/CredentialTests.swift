import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `http://user:password@host/` authenticates as curl does; the password stays off the bus, out of logs and
/// messages, and no credential follows a redirect to another server.
@Suite(.timeLimit(.minutes(2))) struct CredentialTests {
    static let basic = "Basic " + Data("alice:pa ss@1".utf8).base64EncodedString()

    @Test func userinfoAuthenticatesWithBasicAndStaysOffTheBus() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/50k?seed=61&need-auth=alice:pa%20ss@1"
            let url = "http://alice:pa%20ss%401@127.0.0.1:\(f.server.port)" + query
            let reply = try await f.managerCall(.download, [.string(url), .string(f.file("private.bin"))])
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.server.stats().authorizations(query) == [Self.basic])
            #expect(try await f.property(task, .url) == .string("http://alice@127.0.0.1:\(f.server.port)" + query))
        }
    }

    @Test func credentialsDoNotFollowARedirectToAnotherServer() async throws {
        let other = try await TestHTTPServer()
        defer { other.stop() }
        try await TransferFixture.with { f throws in
            let target = "/gen/10k?seed=62"
            let query = "/hostile/redirect?to=" + (other.url(target).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let url = "http://alice:secret@127.0.0.1:\(f.server.port)" + query
            let headers: DBusValue = .stringDictionary(
                ["Authorization": "Bearer token", "Cookie": "session=1", "X-Kept": "yes"]
            )
            let reply = try await f.managerCall(
                .downloadWithOptions,
                [
                    .string(url), .string(f.file("moved.bin")),
                    .vardict(DownloadOption.values([.headers: headers])),
                ]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.server.stats().authorizations(query) == ["Bearer token"], "the first server gets them")
            let moved = try await other.stats().log(target)
            #expect(moved.count == 1 && moved.first?.authorization == nil && moved.first?.cookie == nil)
        }
    }

    @Test func aPasswordNeverReachesAMessageOrTheLog() async throws {
        let password = "hunter2-\(UUID().uuidString.prefix(8))"
        var log = ""
        try await DaemonFixture.with { daemon throws in
            let folder = daemon.bus.directory.path
            // Connection refused, then a redirect that cannot be followed: both messages name the URL's server.
            for url in ["http://bob:\(password)@127.0.0.1:1/x", "http://bob:\(password)@127.0.0.1:65536/x"] {
                let task: ObjectPath
                do {
                    task = try await daemon.calls.download(
                        url, to: folder + "/\(UUID()).bin", options: [.maxRetries: .uint32(0)]
                    )
                } catch let error as DBusError {
                    #expect(error.name == HaulErrorName.invalidArgument.fullName)
                    #expect(!error.message.contains(password))
                    continue
                }
                try await waitUntil("\(task) to complete", timeout: .seconds(10)) {
                    let state = try? await daemon.calls.property(.state, of: task)
                    return state == .state(.completed)
                }
                let properties = try await daemon.calls.properties(of: task)
                #expect(String(describing: properties).contains("connection refused"))
                #expect(!String(describing: properties).contains(password))
            }
            log = await daemon.hauld.stop().stderr
        }
        #expect(log.contains("refused"), "the failure was logged: \(log)")
        #expect(!log.contains(password))
    }
}
