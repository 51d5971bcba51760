import Foundation
import HaulCore
import HaulTestSupport
import HaulTransfer
import Synchronization
import Testing

/// Downloads over several connections, run in-process on the transfer client against the test server: byte-exact
/// results, and the server's own count proving that no range was fetched twice.
@Suite(.timeLimit(.minutes(3))) struct SegmentedDownloadTests {
    static let mib = 1 << 20
    /// What a loopback connection can have in flight when its segment is cut short (socket buffers).
    static let inFlight = 8 << 20

    /// What a run told its caller.
    final class Heard: Sendable {
        let plan = Mutex<SegmentPlan?>(nil)
        let bytes = Mutex<UInt64>(0)
    }

    static func download(
        _ server: TestHTTPServer, _ query: String, to partial: URL, connections: Int, plan: SegmentPlan? = nil,
        validator: ResumeValidator? = nil, heard: Heard = Heard()
    ) async throws(TransferFailure) -> DownloadOutcome {
        let client = TransferClient()
        defer { Task { await client.shutdown() } }
        return try await client.download(
            url: URL(string: server.url(query))!, partialPath: partial.path, connections: connections, plan: plan,
            validator: validator, headers: [:], onHead: { _ in },
            onProgress: { bytes in heard.bytes.withLock { $0 = bytes } },
            onPlan: { plan in heard.plan.withLock { $0 = plan } }
        )
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-segments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: [1, 4, 16])
    func theFileIsByteExactAndNoRangeIsFetchedTwice(_ connections: Int) async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent("big.partial")
        let query = "/gen/32m?seed=81"
        let outcome = try await Self.download(server, query, to: partial, connections: connections)
        #expect(outcome.bytesOnDisk == UInt64(32 * Self.mib))
        #expect(try await TestHTTPServer.sha256(ofFile: partial) == (try await TestHTTPServer.sha256OfGenerated(size: 32 * Self.mib, seed: 81)))
        let stats = try await server.stats()
        // A segment cut short (a free connection took its second half) stops reading what the server had already
        // sent past the cut: at most its socket buffers. Nothing else is fetched twice.
        let cuts = max(stats.requests(query) - connections - 1, 0)
        #expect(stats.bytesSent(query) >= 32 * Self.mib)
        #expect(stats.bytesSent(query) <= 32 * Self.mib + cuts * Self.inFlight, "\(cuts) cuts")
        #expect(stats.requests(query) >= connections, "one request per connection at least")
        // Every ranged request after the first names the validator seen first.
        #expect(stats.log(query).dropFirst().allSatisfy { $0.ifRange == "\"gen-33554432-81\"" })
    }

    /// Suspended mid-way (the attempt's task cancelled), then resumed from the plan it left: each segment continues
    /// where it stopped.
    @Test func aStoppedDownloadResumesEverySegment() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent("resumed.partial")
        // 500 kB/s a connection: 4 MiB after about 2 s, the whole after 8, so the stop comes mid-way even under load.
        let query = "/gen/16m?seed=82&throttle=500000"
        let heard = Heard()
        let first = Task { try await Self.download(server, query, to: partial, connections: 4, heard: heard) }
        try await waitUntil("4 MiB written", timeout: .seconds(30)) {
            heard.bytes.withLock { $0 } >= UInt64(4 * Self.mib)
        }
        first.cancel()
        _ = await first.result
        let plan = try #require(heard.plan.withLock { $0 })
        #expect(plan.segments.count == 4 && !plan.isComplete && plan.bytesDone >= Int64(4 * Self.mib))
        let sentBefore = try await server.stats().bytesSent(query)

        let outcome = try await Self.download(
            server, query.replacingOccurrences(of: "&throttle=500000", with: ""), to: partial, connections: 4,
            plan: plan, validator: ResumeValidator(etag: "\"gen-16777216-82\"")
        )
        #expect(outcome.bytesOnDisk == UInt64(16 * Self.mib))
        #expect(try await TestHTTPServer.sha256(ofFile: partial) == (try await TestHTTPServer.sha256OfGenerated(size: 16 * Self.mib, seed: 82)))
        let resumed = try await server.stats()
        let sentAfter = resumed.bytesSent("/gen/16m?seed=82")
        // What the resumed run fetched is what the plan still missed: nothing on disk was fetched again, only what
        // was in flight when a segment was cut short.
        let cuts = max(resumed.requests("/gen/16m?seed=82") - 4, 0)
        #expect(sentAfter >= 16 * Self.mib - Int(plan.bytesDone))
        #expect(sentAfter <= 16 * Self.mib - Int(plan.bytesDone) + cuts * Self.inFlight)
        // Every request of the resumed run starts where a segment's bytes on disk end, or further into what it
        // still missed (a segment split for a free connection): never inside what was on disk.
        let starts = resumed.ranges("/gen/16m?seed=82").compactMap { range in
            Int64(range.dropFirst("bytes=".count).prefix { $0 != "-" })
        }
        #expect(starts.count >= plan.unfinished.count, "one request at least per segment still missing bytes")
        #expect(starts.allSatisfy { start in plan.segments.contains { $0.next <= start && start < $0.end } }, "\(starts)")
        #expect(sentBefore >= Int(plan.bytesDone))
    }

    @Test func aServerThatIgnoresRangesGetsOneConnection() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent("whole.partial")
        let query = "/gen/4m?seed=83&ignore-range=1"
        let outcome = try await Self.download(server, query, to: partial, connections: 8)
        #expect(outcome.bytesOnDisk == UInt64(4 * Self.mib))
        #expect(try await server.stats().requests(query) == 1)
        #expect(try await TestHTTPServer.sha256(ofFile: partial) == (try await TestHTTPServer.sha256OfGenerated(size: 4 * Self.mib, seed: 83)))
    }

    /// The validator changes between the first answer and the others: the attempt ends, to start again from zero.
    @Test func aFileThatChangesEndsTheAttempt() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent("changing.partial")
        do {
            _ = try await Self.download(server, "/gen/8m?seed=84&etag-changes=1", to: partial, connections: 4)
            Issue.record("a changing file was accepted")
        } catch {
            #expect(error.message.contains("changed on the server"))
            #expect(error.isTransient)
        }
    }
}
