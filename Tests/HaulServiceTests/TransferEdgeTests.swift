import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Redirects, servers that cap ranges, folders hauld may not write into, and a Retry-After on uploads.
@Suite(.timeLimit(.minutes(2))) struct TransferEdgeTests {
    static let kib = 1024

    @Test func redirectsAreFollowedAndResumeGoesThroughThemAgain() async throws {
        try await TransferFixture.with { f throws in
            let target = "/gen/1m?seed=31&reset-after=400000"
            let task = try await f.download("/redirect/302/redirect/307" + target, to: "moved.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.property(task, .httpStatus) == .uint32(206))
            #expect(try await f.sha256(of: "moved.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 31)))
            // The retry started at the task's URL again and carried its range through both hops.
            let stats = try await f.server.stats()
            #expect(stats.requests("/redirect/302/redirect/307" + target) == 2)
            #expect(stats.ranges(target) == ["bytes=400000-"])
            #expect(stats.bytesSent(target) == 1 << 20)
        }
    }

    @Test func tooManyRedirectsFailTheTask() async throws {
        try await TransferFixture.with { f throws in
            let chain = String(repeating: "/redirect/302", count: 11) + "/gen/1k"
            let task = try await f.download(chain, to: "far.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == HaulErrorName.network.fullName)
            #expect(!FileManager.default.fileExists(atPath: f.file("far.bin")))
        }
    }

    /// A server may answer `Range: bytes=N-` with less than the rest (a 206 ending early): each short answer is
    /// kept and the next attempt asks for what is still missing, so no byte is fetched twice.
    @Test func shortPartialResponsesAreContinued() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/300k?seed=32&reset-after=100000&range-cap=100000"
            let task = try await f.download(query, to: "capped.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "capped.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 300 * Self.kib, seed: 32)))
            let stats = try await f.server.stats()
            #expect(stats.ranges(query) == ["bytes=100000-", "bytes=200000-", "bytes=300000-"])
            #expect(stats.bytesSent(query) == 300 * Self.kib)
        }
    }

    @Test func aFolderHauldCannotWriteIntoIsRefusedOrFailsTheTask() async throws {
        // A read timeout longer than the server's pause below: the attempt must outlast the pause, not time out and
        // wait for its retry while the test waits for the outcome.
        try await TransferFixture.with(readTimeout: 120, launcher: Self.withoutRootsFilePowers) { f throws in
            let locked = f.folder.appendingPathComponent("locked")
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
            try Self.setMode(0o500, of: locked)
            do {
                _ = try await f.download("/gen/1k", to: "locked/x.bin")
                Issue.record("a download into a read-only folder was accepted")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.permissionDenied.fullName)
            }

            // The folder turns read-only while the download runs: the file cannot be put in place.
            let later = f.folder.appendingPathComponent("later")
            try FileManager.default.createDirectory(at: later, withIntermediateDirectories: false)
            // The server pauses 20 s after the first 100,000 bytes, so that a loaded machine cannot finish the download
            // before the folder is locked; the wait for the outcome outlasts the pause.
            let task = try await f.download("/gen/400k?seed=33&stall-after=100000&stall-seconds=20", to: "later/x.bin")
            try await f.wait(task, received: 1)
            try Self.setMode(0o500, of: later)
            defer { try? Self.setMode(0o700, of: later) }
            try await f.wait(task, until: .completed, timeout: .seconds(90))
            #expect(try await f.errorName(task) == HaulErrorName.permissionDenied.fullName)
            #expect(!FileManager.default.fileExists(atPath: f.file("later/x.bin")))
        }
    }

    @Test func anUploadWaitsAsLongAsRetryAfterAsks() async throws {
        try await TransferFixture.with { f throws in
            let source = f.folder.appendingPathComponent("source.bin")
            try await TestHTTPServer.writeGenerated(size: 64 * Self.kib, seed: 34, to: source)
            let target = "/upload/later.bin?fail=503&retry-after=3"
            let started = ContinuousClock.now
            let reply = try await f.managerCall(.upload, [.string(f.server.url(target)), .string(source.path)])
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            let elapsed = ContinuousClock.now - started
            #expect(try await f.errorName(task) == "")
            // The back-off alone would have retried after 1 s.
            #expect(elapsed >= .seconds(3), "retried after \(elapsed)")
            #expect(try await f.server.stats().uploads(target).last?.sha256 == (try await TestHTTPServer.sha256(ofFile: source)))
        }
    }

    /// Root writes anywhere, so as root hauld runs without the capabilities that override file permissions.
    static var withoutRootsFilePowers: [String] {
        guard geteuid() == 0 else { return [] }
        let capabilities = "-dac_override,-dac_read_search,-fowner"
        return ["setpriv", "--inh-caps=\(capabilities)", "--bounding-set=\(capabilities)", "--"]
    }

    static func setMode(_ mode: mode_t, of url: URL) throws {
        guard chmod(url.path, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
