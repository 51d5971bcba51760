import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// One attempt is one attempt: a refused connection ends it at once (async-http-client used to reconnect for the
/// whole 15 s connect timeout), and the message is a sentence about the server.
@Suite(.timeLimit(.minutes(2))) struct ConnectionFailureTests {
    @Test func aRefusedConnectionEndsTheAttemptAtOnce() async throws {
        try await TransferFixture.with { f throws in
            let reply = try await f.managerCall(
                "DownloadWithOptions",
                [.string("http://127.0.0.1:1/file"), .string(f.file("refused.bin")), .vardict(["max-retries": .uint32(0)])]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: "completed", timeout: .seconds(30))
            // The refusal itself ended the attempt: reconnecting until the 15 s connect timeout would have ended it
            // as a Timeout, "could not connect to 127.0.0.1:1 within 15 s" (a wall-clock bound would only measure
            // the machine's load).
            #expect(try await f.errorName(task) == "org.haul.Haul1.Error.Network")
            #expect(try await f.property(task, "ErrorMessage") == .string("connection refused by 127.0.0.1:1"))
        }
    }

    @Test func aServerThatClosesEarlyIsNamed() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download(
                "/gen/100k?seed=71&close-after=1000&close-times=9", to: "short.bin", options: ["max-retries": .uint32(0)]
            )
            try await f.wait(task, until: "completed")
            let message = try await f.property(task, "ErrorMessage").stringValue ?? ""
            #expect(message.contains("127.0.0.1:\(f.server.port)"), "\(message)")
            #expect(!message.contains("errno") && !message.contains("HTTPClientError"), "\(message)")
        }
    }
}

extension ConnectionFailureTests {
    /// https to a server that speaks plain http: the handshake fails, said as such, and the attempt ends at once.
    @Test func aFailedHandshakeIsNamed() async throws {
        try await TransferFixture.with { f throws in
            let url = "https://127.0.0.1:\(f.server.port)/gen/1k"
            let reply = try await f.managerCall(
                "DownloadWithOptions", [.string(url), .string(f.file("tls.bin")), .vardict(["max-retries": .uint32(0)])]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: "completed", timeout: .seconds(10))
            let message = try await f.property(task, "ErrorMessage").stringValue ?? ""
            #expect(message.hasPrefix("the TLS handshake with 127.0.0.1:\(f.server.port) failed"), "\(message)")
        }
    }
}
