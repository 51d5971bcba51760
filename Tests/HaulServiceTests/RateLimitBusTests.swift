import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Rate limits through hauld: the Manager's `DownloadRateLimit`/`UploadRateLimit`, a task's `RateLimit` and the
/// `rate-limit` option, measured on the wire against the test server. As in `RateGateTests`, only the lower bound of a
/// transfer's time is strict (a limit cannot be broken by a slow machine).
@Suite(.timeLimit(.minutes(3))) struct RateLimitBusTests {
    static let mib = 1 << 20

    @Test func aTasksLimitHoldsOnTheWire() async throws {
        try await TransferFixture.with { f throws in
            let start = ContinuousClock.now
            let task = try await f.download(
                "/gen/3m?seed=21", to: "limited.bin", options: [.rateLimit: .uint64(UInt64(Self.mib))]
            )
            try await f.wait(task, until: .completed)
            let seconds = RateLimitTiming.seconds(since: start)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.property(task, .rateLimit) == .uint64(UInt64(Self.mib)))
            #expect(try await f.sha256(of: "limited.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 3 * Self.mib, seed: 21)))
            #expect(seconds >= RateLimitTiming.least(3 * Self.mib, at: Self.mib), "3 MiB at 1 MiB/s took \(seconds) s")
        }
    }

    /// A limited download never takes a connection an unlimited one left open: that connection's receive window grew
    /// with the unlimited transfer, and the server would push that much of the limited one ahead of its limit.
    @Test func aLimitedDownloadOpensAConnectionOfItsOwn() async throws {
        try await TransferFixture.with { f throws in
            // One after another, so that each event loop has an idle connection to the server in the pool.
            var unlimited: [String] = []
            for index in 0..<4 {
                let query = "/gen/64k?seed=24&unlimited=\(index)"
                try await f.wait(try await f.download(query, to: "unlimited-\(index).bin"), until: .completed)
                unlimited.append(query)
            }
            let limited = "/gen/64k?seed=24&limited=1"
            let task = try await f.download(limited, to: "limited.bin", options: [.rateLimit: .uint64(UInt64(Self.mib))])
            try await f.wait(task, until: .completed)
            let stats = try await f.server.stats()
            let pooled = Set(unlimited.compactMap { stats.log($0).first?.connection })
            // The unlimited downloads shared their connections, so there was one to take.
            #expect(pooled.count < unlimited.count)
            let connection = try #require(stats.log(limited).first?.connection)
            #expect(!pooled.contains(connection))
        }
    }

    /// The Manager's upload limit paces an upload's body.
    @Test func theUploadLimitPacesUploads() async throws {
        try await TransferFixture.with { f throws in
            try await f.calls.set(.uploadRateLimit, to: .uint64(UInt64(Self.mib)))
            let source = f.folder.appendingPathComponent("source")
            try await TestHTTPServer.writeGenerated(size: 2 * Self.mib, seed: 22, to: source)
            let start = ContinuousClock.now
            let reply = try await f.managerCall(.upload, [.string(f.server.url("/upload/paced")), .string(source.path)])
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            let seconds = RateLimitTiming.seconds(since: start)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.server.stats().uploads("/upload/paced").first?.bytes == 2 * Self.mib)
            #expect(seconds >= RateLimitTiming.least(2 * Self.mib, at: Self.mib), "2 MiB at 1 MiB/s took \(seconds) s")
        }
    }

    /// A running transfer follows a new limit: lifted, a download that would take a minute ends at once.
    @Test func aRunningTaskFollowsItsNewLimit() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download(
                "/gen/16m?seed=23", to: "lifted.bin", options: [.rateLimit: .uint64(256 * 1024)]
            )
            try await f.wait(task, received: 1)
            try await f.calls.set(.rateLimit, of: task, to: .uint64(0))
            // At 256 KiB/s the 16 MiB would take 64 s.
            try await f.wait(task, until: .completed, timeout: .seconds(30))
            #expect(try await f.errorName(task) == "")
        }
    }

    @Test func limitsAreValidatedAndKeptAcrossARestart() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-limits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        var suspended: ObjectPath?
        try await TransferFixture.with(stateDirectory: state) { f throws in
            try await f.calls.set(.downloadRateLimit, to: .uint64(2 * UInt64(Self.mib)))
            try await f.calls.set(.uploadRateLimit, to: .uint64(4096))
            for property in [ManagerProperty.downloadRateLimit, .uploadRateLimit] {
                for bad: DBusValue in [.uint64(1), .uint64(4095), .uint32(8192), .int64(8192)] {
                    do {
                        try await f.calls.set(property, to: bad)
                        Issue.record("\(property.name) took \(bad)")
                    } catch let error as DBusError {
                        #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(property.name) = \(bad)")
                    }
                }
            }
            do {
                _ = try await f.download("/gen/1k", to: "bad.bin", options: [.rateLimit: .uint64(100)])
                Issue.record("a rate-limit of 100 was accepted")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.invalidArgument.fullName)
            }
            let task = try await f.download(
                "/gen/1k?seed=24", to: "later.bin",
                options: [.startSuspended: .boolean(true), .rateLimit: .uint64(8192)]
            )
            try await f.calls.set(.rateLimit, of: task, to: .uint64(65536))
            suspended = task
        }
        try await TransferFixture.with(stateDirectory: state) { f throws in
            let manager = try await f.calls.managerProperties()
            #expect(ManagerProperty.downloadRateLimit.value(in: manager) == .uint64(2 * UInt64(Self.mib)))
            #expect(ManagerProperty.uploadRateLimit.value(in: manager) == .uint64(4096))
            let task = try #require(suspended)
            #expect(try await f.property(task, .rateLimit) == .uint64(65536))
        }
    }
}
