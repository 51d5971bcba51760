import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Servers that answer with broken or malicious HTTP, and URLs no socket can use: every task ends with a named
/// error, and hauld goes on answering (a redirect to port 65536 used to crash it, and crash it again on every start).
@Suite(.timeLimit(.minutes(3))) struct HostileServerTests {
    static let once: [DownloadOption: DBusValue] = [.maxRetries: .uint32(0)]

    @Test(arguments: [
        "bad-status", "garbage", "endless-headers", "huge-length", "negative-length", "absurd-range", "max-range",
        "bad-chunk", "nul-header", "huge-retry-after",
    ])
    func brokenAnswersEndTheTaskWithANamedError(_ answer: String) async throws {
        try await TransferFixture.with(readTimeout: 5) { f throws in
            let task = try await f.download("/hostile/\(answer)", to: "\(answer).bin", options: Self.once)
            try await f.wait(task, until: .completed)
            let name = try await f.errorName(task)
            #expect(HaulErrorName(fullName: name) != nil, "\(answer) ended with '\(name)'")
            #expect(!FileManager.default.fileExists(atPath: f.file("\(answer).bin")))
            #expect(try await f.managerCall(.listTasks).first?.arrayValue?.count == 1, "hauld still answers")
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:65536/x", "http://127.0.0.1:99999/", "http://127.0.0.1:4294967296/",
        "https://127.0.0.1:99999/", "http://[::1]:70000/", "file:///etc/passwd", "gopher://127.0.0.1/", "http://",
        "http://[::1",
    ])
    func redirectsThatCannotBeFollowedEndTheTask(_ target: String) async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-hostile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let query = "/hostile/redirect?to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        try await TransferFixture.with(stateDirectory: state) { f throws in
            // With retries left: the task is saved as running while its attempt meets the redirect.
            let task = try await f.download(query, to: "moved.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == HaulErrorName.http.fullName)
            #expect(try await f.property(task, .httpStatus) == .uint32(302))
            #expect(try await f.property(task, .errorMessage).stringValue?.contains("cannot be followed") == true)
            #expect(try await f.server.stats().requests(query) == 1, "a permanent failure is not retried")
        }
        // A new hauld on the same state starts and lists the task as it ended.
        try await DaemonFixture.with(stateDirectory: state) { daemon throws in
            let tasks = try await daemon.calls.call(.listTasks)
            #expect(tasks.first?.arrayValue?.count == 1)
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:65536/", "http://127.0.0.1:99999/", "http://127.0.0.1:4294967296/",
        "https://127.0.0.1:99999/", "http://[::1]:70000/", "http://127.0.0.1:0/",
    ])
    func urlsWithUnusablePortsAreRefused(_ url: String) async throws {
        try await TransferFixture.with { f throws in
            do {
                _ = try await f.managerCall(.download, [.string(url), .string(f.file("x.bin"))])
                Issue.record("\(url) was accepted")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.invalidArgument.fullName)
            }
            #expect(try await f.managerCall(.listTasks).first?.arrayValue?.isEmpty == true)
        }
    }
}
