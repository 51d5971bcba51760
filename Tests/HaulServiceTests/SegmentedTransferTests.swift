import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import Testing

/// Downloads over several connections through hauld: the option and the properties, a kill -9 and a clean stop
/// mid-way with the server's count of what was fetched again, and a disk too small.
@Suite(.timeLimit(.minutes(3))) struct SegmentedTransferTests {
    static let mib = 1 << 20

    @Test func connectionsComeFromTheOptionOrTheManagersDefault() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        try await TransferFixture.with(stateDirectory: state) { f throws in
            let query = "/gen/8m?seed=91"
            let task = try await f.download(query, to: "four.bin", options: [.connections: .uint32(4)])
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.property(task, .connections) == .uint32(4))
            #expect(try await f.sha256(of: "four.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 8 * Self.mib, seed: 91)))
            let log = try await f.server.stats().log(query)
            #expect(log.count >= 4 && log.first?.range == "bytes=0-1048575")
            #expect(log.dropFirst().allSatisfy { $0.ifRange == "\"gen-8388608-91\"" })

            try await f.calls.set(.defaultConnections, to: .uint32(3))
            let byDefault = try await f.download("/gen/1k?seed=92", to: "default.bin")
            #expect(try await f.property(byDefault, .connections) == .uint32(3))
            for bad: DBusValue in [.uint32(0), .uint32(17), .int32(2)] {
                await #expect(throws: DBusError.self) { try await f.calls.set(.defaultConnections, to: bad) }
            }
            do {
                _ = try await f.download("/gen/1k", to: "bad.bin", options: [.connections: .uint32(17)])
                Issue.record("17 connections were accepted")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.invalidArgument.fullName)
            }
            // A suspended task takes a new value for its next start.
            let later = try await f.download(
                "/gen/1k?seed=93", to: "later.bin", options: [.startSuspended: .boolean(true)]
            )
            try await f.calls.set(.connections, of: later, to: .uint32(8))
            #expect(try await f.property(later, .connections) == .uint32(8))
        }
        // Kept across a restart.
        try await DaemonFixture.with(stateDirectory: state) { daemon throws in
            let value = try await daemon.calls.property(.defaultConnections)
            #expect(value == .uint32(3))
        }
    }

    /// hauld killed while four connections run: the restarted hauld continues every segment from the plan it saved
    /// last, so what the server sends again is what came in after that save and what was in flight, not the file.
    @Test func aKilledDownloadContinuesEverySegmentFromItsLastSavedPlan() async throws {
        try await Self.interrupt(with: SIGKILL, seed: 94) { saved, sentBefore, refetched in
            // The plan saved once the size was known holds about 1 MiB; the progress tick saves the next one within
            // `planSaveInterval` (5 s), from the MiB checkpoints the connections post.
            #expect(saved >= Int64(8 * Self.mib))
            // What came after the saved plan (the server's count takes in what sat in the sockets), and what the
            // restarted download's splits cut short: the bytes in flight past each cut.
            #expect(refetched <= sentBefore - Int(saved) + 4 * Self.mib, "fetched \(refetched) bytes twice")
        }
    }

    /// A clean stop (SIGTERM, as at logout) saves each segment's position as its connections stopped, not the plan
    /// of the last periodic save: the next start fetches again only what was in flight.
    @Test func aStoppedDownloadContinuesEverySegmentWhereItStopped() async throws {
        try await Self.interrupt(with: SIGTERM, seed: 96) { _, _, refetched in
            #expect(refetched <= 4 * Self.mib, "fetched \(refetched) bytes twice")
        }
    }

    /// Starts a 24 MiB download over four connections of 0.5 MB/s each, ends hauld with `signal` mid-way, starts it
    /// again on the same state, and checks the file once it completes. `check` gets the bytes done of the plan saved
    /// in the task's record when hauld ended, what the server had sent until then, and what it sent twice.
    private static func interrupt(
        with signal: Int32, seed: Int, check: (_ saved: Int64, _ sentBefore: Int, _ refetched: Int) -> Void
    ) async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = bus.directory.appendingPathComponent("state")
        let store = TaskStore(directory: state.appendingPathComponent("haul/tasks"))
        let target = bus.directory.appendingPathComponent("interrupted.bin").path
        let client = try await DBusConnection.connect(address: bus.address)
        let size = 24 * Self.mib
        let query = "/gen/24m?seed=\(seed)&throttle=500000"
        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        let hauld = HauldCalls(client)
        let task = try await hauld.download(server.url(query), to: target, options: [.connections: .uint32(4)])
        let savedDone = { store.loadAll().records.first?.segments?.bytesDone ?? 0 }
        if signal == SIGKILL {
            try await waitUntil("a plan of 8 MiB saved", timeout: .seconds(30), every: .milliseconds(50)) {
                savedDone() >= Int64(8 * Self.mib)
            }
        } else {
            try await waitUntil("8 MiB received", timeout: .seconds(30), every: .milliseconds(50)) {
                let received = try? await hauld.property(.bytesReceived, of: task)
                return (received?.uint64Value ?? 0) >= UInt64(8 * Self.mib)
            }
        }
        _ = await first.stop(signal: signal)
        let saved = savedDone()
        let sentBefore = try await server.stats().bytesSent(query)

        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        try await waitUntil("the restored download to complete", timeout: .seconds(60), every: .milliseconds(100)) {
            (try? await hauld.property(.state, of: task)) == .state(.completed)
        }
        #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == (try await TestHTTPServer.sha256OfGenerated(size: size, seed: seed)))
        let stats = try await server.stats()
        check(saved, sentBefore, stats.bytesSent(query) - size)
        #expect(sentBefore >= 8 * Self.mib)
        #expect(stats.log(query).dropFirst().allSatisfy { $0.ifRange == "\"gen-\(size)-\(seed)\"" }, "\(stats.log(query).map { ($0.range ?? "-", $0.ifRange ?? "-", $0.bytesSent) })")
        _ = await second.stop()
        await client.close()
    }

    /// A disk too small for the file fails at once, before the body is fetched, with one connection or four.
    @Test(arguments: [1, 4])
    func aDiskTooSmallFailsAtOnce(_ connections: Int) async throws {
        try await TransferFixture.with { f throws in
            let small = f.folder.appendingPathComponent("small")
            try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
            let mount = try await Command.run("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", small.path])
            try #require(mount.status == 0, "tests run as root and mount a tmpfs: \(mount.stderr)")
            var failure: (any Error)?
            do {
                // Paced at 2 MB/s: the first MiB would take half a second, so less than that fetched means the
                // failure came as soon as the size was known (a wall-clock bound would only measure the machine's load).
                let query = "/gen/16m?seed=95&throttle=2000000&id=\(connections)"
                let options: [DownloadOption: DBusValue] = [
                    .connections: .uint32(UInt32(connections)), .maxRetries: .uint32(0),
                ]
                let task = try await f.download(query, to: "small/big.bin", options: options)
                try await f.wait(task, until: .completed, timeout: .seconds(20))
                #expect(try await f.errorName(task) == HaulErrorName.diskFull.fullName)
                #expect(try await f.server.stats().bytesSent(query) < Self.mib)
            } catch {
                failure = error
            }
            _ = try? await Command.run("umount", ["-l", small.path])
            if let failure { throw failure }
        }
    }
}

extension SegmentedTransferTests {
    /// Suspend closes every connection: once it returns nothing more reaches the file, and Resume continues each
    /// segment to a byte-exact result.
    @Test func suspendStopsEveryConnection() async throws {
        try await TransferFixture.with { f throws in
            // Each of the first four answers pauses after 800 000 bytes: the Suspend finds all four connections
            // open, however loaded the machine.
            let query = "/gen/16m?seed=96&stall-after=800000&stall-seconds=30&stall-times=4"
            let task = try await f.download(query, to: "paused.bin", options: [.connections: .uint32(4)])
            try await f.wait(task, received: UInt64(3 * 800_000))
            try await f.taskCall(task, .suspend)
            let partial = f.folder.appendingPathComponent("paused.bin.haul-partial")
            let atSuspend = try Data(contentsOf: partial)
            let bytes = try await f.property(task, .bytesReceived)
            try await Task.sleep(for: .seconds(1))
            #expect(try Data(contentsOf: partial) == atSuspend, "nothing written after Suspend returned")
            #expect(try await f.property(task, .bytesReceived) == bytes)
            let stats = try await f.server.stats()
            #expect(stats.log(query).allSatisfy { $0.outcome != "pending" }, "every connection closed")
            try await f.taskCall(task, .resume)
            try await f.wait(task, until: .completed)
            #expect(try await f.sha256(of: "paused.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 16 * Self.mib, seed: 96)))
        }
    }
}

extension SegmentedTransferTests {
    /// Connections raised while a single-connection download is suspended: what it appended so far stays, and the
    /// rest is split among the new connections.
    @Test func raisingConnectionsKeepsTheBytesOnDisk() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/8m?seed=97&stall-after=2000000&stall-seconds=30"
            let task = try await f.download(query, to: "raised.bin")
            try await f.wait(task, received: 2_000_000)
            try await f.taskCall(task, .suspend)
            try await f.calls.set(.connections, of: task, to: .uint32(4))
            try await f.taskCall(task, .resume)
            try await f.wait(task, until: .completed)
            #expect(try await f.sha256(of: "raised.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 8 * Self.mib, seed: 97)))
            let stats = try await f.server.stats()
            #expect(stats.log(query).dropFirst().allSatisfy { $0.range?.hasPrefix("bytes=0-") == false }, "\(stats.ranges(query))")
            #expect(stats.requests(query) >= 4)
        }
    }
}
