import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Resuming with a date in `If-Range` only when the date is a strong validator (RFC 9110 §8.8.2.2), against the
/// test server with no ETag, so that `Last-Modified` is the only validator.
@Suite(.timeLimit(.minutes(2))) struct TransferIfRangeTests {
    /// Downloads `query` (2 MiB, generated with `seed`; the first answer pauses after 300 000 bytes, so the Suspend
    /// always finds it running, however loaded the machine), suspends it with some bytes on disk and resumes it;
    /// returns the server's log of its requests.
    func suspendAndResume(_ f: TransferFixture, _ query: String, seed: Int) async throws -> [ServerStats.Request] {
        let task = try await f.download(query, to: "file.bin")
        try await f.wait(task, received: 200_000)
        try await f.taskCall(task, .suspend)
        try await f.taskCall(task, .resume)
        try await f.wait(task, until: .completed)
        #expect(try await f.errorName(task) == "")
        let expected = try await TestHTTPServer.sha256OfGenerated(size: 2 << 20, seed: seed)
        #expect(try await f.sha256(of: "file.bin") == expected)
        return try await f.server.stats().log(query)
    }

    @Test func aDateAsLateAsTheResponseIsWeakSoTheResumeFetchesTheWholeFile() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/2m?seed=41&stall-after=300000&stall-seconds=90&no-etag=1&date=last-modified"
            let log = try await suspendAndResume(f, query, seed: 41)
            try #require(log.count == 2, "\(log)")
            // No Range at all: without a usable If-Range the task starts again from zero.
            #expect(log[1].range == nil && log[1].ifRange == nil, "\(log[1])")
            #expect(log[1].status == 200)
            #expect(try await f.property(HaulBus.taskPath(1), .resumable) == .boolean(false))
        }
    }

    @Test func aDateASecondBeforeTheResponseIsStrongSoTheResumeSendsIt() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/2m?seed=42&stall-after=300000&stall-seconds=90&no-etag=1"
            let log = try await suspendAndResume(f, query, seed: 42)
            try #require(log.count == 2, "\(log)")
            // The server's Last-Modified for /gen is 2001-01-01 plus the seed in seconds; its Date is now.
            #expect(log[1].ifRange == "Mon, 01 Jan 2001 00:00:42 GMT", "\(log[1])")
            #expect(log[1].range?.hasPrefix("bytes=") == true && log[1].range != "bytes=0-", "\(log[1])")
            #expect(log[1].status == 206)
            #expect(try await f.property(HaulBus.taskPath(1), .resumable) == .boolean(true))
        }
    }
}
