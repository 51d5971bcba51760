import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Downloads and uploads through hauld against the fault-injecting server: exact bytes on every path.
@Suite(.timeLimit(.minutes(2))) struct TransferTests {
    static let mib = 1 << 20

    @Test func aPlainDownloadIsByteExact() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download("/gen/3m?seed=11", to: "plain.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "plain.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 3 * Self.mib, seed: 11)))
            #expect(try await f.property(task, .bytesReceived) == .uint64(UInt64(3 * Self.mib)))
            #expect(try await f.property(task, .downloadProgress) == .double(1))
            #expect(try await f.property(task, .httpStatus) == .uint32(200))
            #expect(!FileManager.default.fileExists(atPath: f.file("plain.bin.haul-partial")))
        }
    }

    @Test func suspendStopsWritingAndResumeFetchesOnlyTheRest() async throws {
        try await TransferFixture.with { f throws in
            // Slow (8 s in all), and the first response pauses for good after 3 MB: the task is surely still running
            // when it is suspended, however loaded the machine; the resumed request does not pause.
            let query = "/gen/4m?seed=12&throttle=500000&stall-after=3000000"
            let task = try await f.download(query, to: "resume.bin")
            try await f.wait(task, received: 300_000)
            try await f.taskCall(task, .suspend)
            #expect(try await f.property(task, .state) == .state(.suspended))
            let partial = f.file("resume.bin.haul-partial")
            let onDisk = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
            try await Task.sleep(for: .milliseconds(600))
            #expect(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int == onDisk, "written after Suspend")
            try await f.taskCall(task, .suspend)  // a second Suspend does nothing
            try await f.taskCall(task, .resume)
            try await f.wait(task, until: .completed)
            #expect(try await f.sha256(of: "resume.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 4 * Self.mib, seed: 12)))
            let stats = try await f.server.stats()
            #expect(stats.ranges(query) == ["bytes=\(onDisk)-"])
            // Bytes fetched twice are at most what was in flight in socket buffers at the suspend.
            #expect(stats.bytesSent(query) <= 4 * Self.mib + 2 * Self.mib, "\(stats.bytesSent(query))")
        }
    }

    @Test func cancelRemovesThePartialFileAndCompletesWithCancelled() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download("/gen/8m?seed=13&throttle=500000", to: "cancel.bin")
            try await f.wait(task, received: 100_000)
            try await f.taskCall(task, .cancel)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == HaulErrorName.cancelled.fullName)
            #expect(!FileManager.default.fileExists(atPath: f.file("cancel.bin.haul-partial")))
            #expect(!FileManager.default.fileExists(atPath: f.file("cancel.bin")))
            do {
                try await f.taskCall(task, .resume)
                Issue.record("a completed task resumed")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.taskCompleted.fullName)
            }
        }
    }

    @Test func aResetConnectionIsRetriedFromTheBytesOnDisk() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/2m?seed=14&reset-after=700000"
            let task = try await f.download(query, to: "reset.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "reset.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 2 * Self.mib, seed: 14)))
            let ranges = try await f.server.stats().ranges(query)
            #expect(ranges.count == 1 && ranges[0].hasPrefix("bytes=") && ranges[0] != "bytes=0-", "\(ranges)")
        }
    }

    @Test func aServerIgnoringRangeMakesTheDownloadRestartFromZero() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download("/gen/2m?seed=15&ignore-range=1&reset-after=500000", to: "norange.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.sha256(of: "norange.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 2 * Self.mib, seed: 15)))
        }
    }

    @Test func aChangedValidatorMakesTheDownloadRestartFromZero() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/2m?seed=16&etag-changes=1&reset-after=500000"
            let task = try await f.download(query, to: "etag.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.sha256(of: "etag.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 2 * Self.mib, seed: 16)))
            #expect(try await f.server.stats().bytesSent(query) >= 2 * Self.mib + 500_000)
        }
    }

    @Test func aStalledResponseIsRetried() async throws {
        try await TransferFixture.with(readTimeout: 1) { f throws in
            let task = try await f.download("/gen/1m?seed=18&stall-after=300000&stall-seconds=5", to: "stall.bin")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "stall.bin") == (try await TestHTTPServer.sha256OfGenerated(size: Self.mib, seed: 18)))
        }
    }

    @Test func aDownloadMatchingItsSHA256Completes() async throws {
        try await TransferFixture.with { f throws in
            let expected = try await TestHTTPServer.sha256OfGenerated(size: 3 * Self.mib, seed: 20)
            let task = try await f.download(
                "/gen/3m?seed=20", to: "checked.bin", options: [.sha256: .string(expected.uppercased())]
            )
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "checked.bin") == expected)
        }
    }

    @Test func permanentFailuresCompleteWithTheirErrorNames() async throws {
        try await TransferFixture.with { f throws in
            let notFound = try await f.download("/missing?status=404", to: "404.bin")
            try await f.wait(notFound, until: .completed)
            #expect(try await f.errorName(notFound) == HaulErrorName.http.fullName)
            #expect(try await f.property(notFound, .httpStatus) == .uint32(404))

            let checksum = try await f.download(
                "/gen/10k?seed=19", to: "sum.bin", options: [.sha256: .string(String(repeating: "0", count: 64))]
            )
            try await f.wait(checksum, until: .completed)
            #expect(try await f.errorName(checksum) == HaulErrorName.checksumMismatch.fullName)
            #expect(!FileManager.default.fileExists(atPath: f.file("sum.bin")))

            // Nothing listens on port 1 of loopback: refused, and with no retries allowed it fails at once.
            let refused = try await f.managerCall(
                .downloadWithOptions,
                [
                    .string("http://127.0.0.1:1/x"), .string(f.file("refused.bin")),
                    .vardict(DownloadOption.values([.maxRetries: .uint32(0)])),
                ]
            )
            let refusedTask = try #require(refused.first?.objectPathValue)
            try await f.wait(refusedTask, until: .completed)
            #expect(try await f.errorName(refusedTask) == HaulErrorName.network.fullName)
        }
    }

    @Test func requestsForExistingOrUnreachableDestinationsAreRefused() async throws {
        try await TransferFixture.with { f throws in
            #expect(FileManager.default.createFile(atPath: f.file("exists.bin"), contents: Data("x".utf8)))
            for (name, expected) in [
                ("exists.bin", HaulErrorName.fileExists.fullName),
                ("no/such/folder/x.bin", HaulErrorName.notFound.fullName),
            ] {
                do {
                    _ = try await f.download("/gen/1k", to: name)
                    Issue.record("\(name) was accepted")
                } catch let error as DBusError {
                    #expect(error.name == expected)
                }
            }
            let replaced = try await f.download(
                "/gen/1k?seed=20", to: "exists.bin", options: [.overwrite: .boolean(true)]
            )
            try await f.wait(replaced, until: .completed)
            #expect(try await f.sha256(of: "exists.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1024, seed: 20)))
        }
    }

    @Test(arguments: UploadMethodName.allCases)
    func uploadsSendTheFileFromDisk(_ method: UploadMethodName) async throws {
        try await TransferFixture.with { f throws in
            let source = f.folder.appendingPathComponent("source.bin")
            try await TestHTTPServer.writeGenerated(size: 2 * Self.mib, seed: 21, to: source)
            let reply = try await f.managerCall(
                .uploadWithOptions,
                [
                    .string(f.server.url("/upload/\(method.rawValue).bin")), .string(source.path),
                    .vardict(UploadOption.values([.method: .string(method.rawValue)])),
                ]
            )
            let task = try #require(reply.first?.objectPathValue)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.property(task, .bytesSent) == .uint64(UInt64(2 * Self.mib)))
            #expect(try await f.property(task, .uploadProgress) == .double(1))
            let received = try await f.server.stats().uploads("/upload/\(method.rawValue).bin")
            #expect(received.last?.method == method.rawValue)
            #expect(received.last?.sha256 == (try await TestHTTPServer.sha256(ofFile: source)))
        }
    }

    @Test func signalsAndObjectsFollowTheTask() async throws {
        try await TransferFixture.with { f throws in
            let signals = try await f.client.messages(matching: [
                MatchRule(kind: .signal, path: HaulBus.managerPath, interface: HaulBus.managerInterface),
                MatchRule(kind: .signal, path: HaulBus.rootPath, interface: "org.freedesktop.DBus.ObjectManager"),
            ])
            var iterator = signals.makeAsyncIterator()
            let task = try await f.download(
                "/gen/4m?seed=22&throttle=500000", to: "signals.bin", options: [.startSuspended: .boolean(true)]
            )
            let added = await iterator.next()
            #expect(added?.member == "InterfacesAdded" && added?.body.first == .objectPath(task))
            #expect(try await f.property(task, .state) == .state(.suspended))
            try await f.taskCall(task, .resume)
            #expect(await iterator.next()?.member == ManagerSignal.taskDidResume.rawValue)
            try await waitUntil("the resumed task's hold") {
                try await f.daemon.indicatorProperty(.activityCount) == .uint32(1)
            }
            try await f.taskCall(task, .suspend)
            try await f.taskCall(task, .suspend)
            #expect(await iterator.next()?.member == ManagerSignal.taskDidSuspend.rawValue)
            try await f.taskCall(task, .cancel)
            let completed = await iterator.next()
            #expect(completed?.member == ManagerSignal.taskDidComplete.rawValue)
            let cancelled = DBusValue.string(HaulErrorName.cancelled.fullName)
            #expect(completed?.body == [.objectPath(task), cancelled, .string("the task was cancelled")]
                || completed?.body.dropFirst().first == cancelled)
            #expect(try await f.daemon.indicatorProperty(.activityCount) == .uint32(0))
            try await f.taskCall(task, .forget)
            let removed = await iterator.next()
            #expect(removed?.member == "InterfacesRemoved" && removed?.body.first == .objectPath(task))
            #expect(try await f.managerCall(.listTasks) == [.array(.objectPath, [])])
        }
    }

    @Test func theURLPropertyNeverShowsAPassword() async throws {
        try await TransferFixture.with { f throws in
            let url = "http://alice:secret@127.0.0.1:\(f.server.port)/gen/1k?seed=24"
            let reply = try await f.managerCall(.download, [.string(url), .string(f.file("pw.bin"))])
            let task = try #require(reply.first?.objectPathValue)
            let shown = try await f.property(task, .url).stringValue ?? ""
            #expect(!shown.contains("secret") && shown.contains("alice@127.0.0.1"))
            try await f.wait(task, until: .completed)
        }
    }

    /// A second hauld on the same state directory must not restart the first one's transfers (it would
    /// write into the same partial files) before it learns that the name is taken.
    @Test func aSecondHauldLeavesTheRunningTasksAlone() async throws {
        try await TransferFixture.with { f throws in
            // Paused after 100 000 bytes for up to 30 s: the task is still running whatever the machine's load.
            let query = "/gen/4m?seed=26&stall-after=100000&stall-seconds=30"
            let task = try await f.download(query, to: "second.bin")
            try await f.wait(task, received: 100_000)
            var environment = f.daemon.bus.environment
            environment["XDG_STATE_HOME"] = f.daemon.hauld.stateDirectory.path
            let second = try await Command.run(Command.built("hauld"), [], environment: environment)
            #expect(second.status == 3)
            try await f.taskCall(task, .cancel)
            #expect(try await f.server.stats().requests(query) == 1)
        }
    }

    @Test func tasksSurviveKill9AndFinishByteExact() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let folder = bus.directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The first response pauses for good after 2 MB: hauld is killed mid-transfer however loaded the machine.
        let query = "/gen/4m?seed=25&throttle=1000000&stall-after=2000000"
        let target = folder.appendingPathComponent("crash.bin").path

        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        let client = try await DBusConnection.connect(address: bus.address)
        let hauld = HauldCalls(client)
        let reply = try await hauld.call(.download, [.string(server.url(query)), .string(target)])
        let task = try #require(reply.first?.objectPathValue)
        // Killed mid-download, once some bytes are on disk.
        let partialPath = target + ".haul-partial"
        try await waitUntil("300 000 bytes on disk", timeout: .seconds(30), every: .milliseconds(50)) {
            ((try? FileManager.default.attributesOfItem(atPath: partialPath)[.size] as? Int) ?? 0) >= 300_000
        }
        _ = await first.stop(signal: SIGKILL)
        let onDisk = (try? FileManager.default.attributesOfItem(atPath: partialPath)[.size] as? Int) ?? 0
        #expect(onDisk >= 300_000 && onDisk < 4 * Self.mib, "\(onDisk) bytes on disk when killed")

        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        let restored: [DBusValue]
        do {
            restored = try await hauld.call(.listTasks)
        } catch {
            let output = await second.stop()
            Issue.record("the restarted hauld did not answer (\(error)); it exited \(output.status): \(output.stderr)")
            return
        }
        try await hauld.call(.listTasks)
        #expect(restored == [.array(.objectPath, [.objectPath(task)])])
        try await waitUntil("the restored download to complete", timeout: .seconds(60), every: .milliseconds(100)) {
            try await hauld.property(.state, of: task) == .state(.completed)
        }
        #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == (try await TestHTTPServer.sha256OfGenerated(size: 4 * Self.mib, seed: 25)))
        let ranges = try await server.stats().ranges(query)
        #expect(ranges.count == 1 && ranges[0] != "bytes=0-", "the restart fetched again from zero: \(ranges)")
        await client.close()
    }
}
