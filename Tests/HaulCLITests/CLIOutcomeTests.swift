import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// How `haul` tells a person how a transfer ended: completed, failed or cancelled, and hauld gone meanwhile.
@Suite(.timeLimit(.minutes(2))) struct CLIOutcomeTests {
    func haul(_ f: TransferFixture, _ arguments: [String]) async throws -> CommandResult {
        try await Command.run(Command.built("haul"), arguments, environment: f.daemon.bus.environment)
    }

    func json(_ line: Substring) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
    }

    @Test func getAndWatchExitOneForAFailedTaskAndTwoForACancelledOne() async throws {
        try await TransferFixture.with { f throws in
            let failed = try await haul(f, ["get", f.server.url("/nothing?status=404"), "-o", f.file("404.bin")])
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("haul: download 1 failed: "), "\(failed.stderr)")
            #expect(failed.stderr.contains("(\(HaulErrorName.http.fullName))"), "\(failed.stderr)")
            #expect(failed.stdout.contains(" failed  #1 404.bin"), "\(failed.stdout)")

            // Half a minute of transfer (however slow the machine, still running when the cancel comes), cancelled
            // by another client while get follows it.
            let get = try CommandWithOutputFile.start(
                Command.built("haul"), ["get", f.server.url("/gen/16m?seed=51&throttle=500000"), "-o", f.file("c.bin")],
                environment: f.daemon.bus.environment, output: f.folder.appendingPathComponent("get.out")
            )
            try await f.wait(HaulBus.taskPath(2), received: 100_000)
            try await f.taskCall(HaulBus.taskPath(2), .cancel)
            let cancelled = await get.finish()
            #expect(cancelled.status == 2, "\(cancelled.stderr)")
            #expect(cancelled.stderr == "haul: download 2 was cancelled\n")
            #expect(get.lines.last?.contains(" cancelled  #2 c.bin") == true, "\(get.lines)")

            let watchFailed = try await haul(f, ["watch", "1"])
            #expect(watchFailed.status == 1 && watchFailed.stdout.contains(" failed  #1"), "\(watchFailed.stdout)")
            let watchCancelled = try await haul(f, ["watch", "2", "--json"])
            #expect(watchCancelled.status == 2)
            let last = try json(watchCancelled.stdout.split(separator: "\n").last ?? "")
            #expect(last["outcome"] as? String == "cancelled")
            #expect(last["state"] as? String == TaskStateName.completed.rawValue)
        }
    }

    @Test func lsShowsFailedAndCancelledTasksAsSuch() async throws {
        try await TransferFixture.with { f throws in
            let succeeded = try await f.download("/gen/10k?seed=52", to: "ok.bin")
            let failed = try await f.download("/nothing?status=404", to: "404.bin")
            let cancelled = try await f.download("/gen/4m?seed=53&throttle=200000", to: "c.bin")
            let running = try await f.download("/gen/4m?seed=54&throttle=200000", to: "r.bin")
            try await f.taskCall(cancelled, .cancel)
            for task in [succeeded, failed, cancelled] { try await f.wait(task, until: .completed) }

            let rows = try await haul(f, ["ls"]).stdout.split(separator: "\n")
            try #require(rows.count == 4, "\(rows)")
            #expect(rows[0].hasPrefix("   1  completed "), "\(rows[0])")
            // The row ends with who asked (this test's process), and nothing after it.
            let asker = try await f.property(succeeded, .application).stringValue ?? "?"
            #expect(rows[0].hasSuffix("ok.bin (\(asker))"), "a success has no error to show: \(rows[0])")
            #expect(rows[1].hasPrefix("   2  failed "), "\(rows[1])")
            #expect(rows[1].hasSuffix("(HTTP: \(try await f.property(failed, .errorMessage).stringValue ?? "?"))"))
            #expect(rows[2].hasPrefix("   3  cancelled "), "\(rows[2])")
            #expect(rows[2].hasSuffix("c.bin (\(asker))"), "cancelled says it all: \(rows[2])")
            #expect(rows[3].hasPrefix("   4  running "), "\(rows[3])")
            // The progress column lines up whatever the state's length.
            #expect(rows[0].dropFirst(17).prefix(4) == "100%" && rows[1].dropFirst(17).prefix(4) == "  ? ", "\(rows)")

            let objects = try await haul(f, ["ls", "--json"]).stdout.split(separator: "\n").map(json)
            #expect(objects.map { $0["outcome"] as? String } == ["succeeded", "failed", "cancelled", ""])
            let states: [TaskStateName] = [.completed, .completed, .completed, .running]
            #expect(objects.map { $0["state"] as? String } == states.map(\.rawValue))
            #expect(objects[2]["error_name"] as? String == HaulErrorName.cancelled.fullName)
            try await f.taskCall(running, .cancel)
        }
    }

    @Test func lsCutsALongErrorMessageToOneLine() async throws {
        try await TransferFixture.with { f throws in
            // A checksum mismatch names both sums: a message longer than a row should carry.
            let task = try await f.download(
                "/gen/10k?seed=55", to: "sum.bin", options: [.sha256: .string(String(repeating: "0", count: 64))]
            )
            try await f.wait(task, until: .completed)
            let message = try await f.property(task, .errorMessage).stringValue ?? ""
            try #require(message.count > 72, "\(message)")
            let row = try await haul(f, ["ls"]).stdout
            #expect(row.hasSuffix("(ChecksumMismatch: \(message.prefix(71))…)\n"), "\(row)")
            let object = try json(Substring(try await haul(f, ["ls", "--json"]).stdout))
            #expect(object["error_message"] as? String == message, "JSON keeps it whole")
        }
    }

    @Test func getSaysSoWhenHauldStopsAndTheTaskGoesOnWithTheNextHauld() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = bus.directory.appendingPathComponent("state")
        let target = bus.directory.appendingPathComponent("stop.bin").path
        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        // The server pauses 30 s after 100,000 bytes: hauld is stopped mid-transfer however loaded the machine.
        let get = try CommandWithOutputFile.start(
            Command.built("haul"),
            ["get", server.url("/gen/2m?seed=56&stall-after=100000&stall-seconds=30"), "-o", target],
            environment: bus.environment, output: bus.directory.appendingPathComponent("get.out")
        )
        // The first progress line is printed once get is subscribed.
        try await get.waitForLines(1)
        let stopped = await first.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let result = await get.finish()
        #expect(result.status == 69)
        #expect(
            result.stderr == "haul: hauld left the bus while following task 1; the task is saved and goes on when "
                + "hauld is back: `haul watch 1` follows it again.\n"
        )
        // A SIGTERM leaves the task to the next hauld, which continues it.
        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        let watch = try await Command.run(Command.built("haul"), ["watch", "1"], environment: bus.environment)
        #expect(watch.status == 0, "\(watch.stderr)")
        let expected = try await TestHTTPServer.sha256OfGenerated(size: 2 << 20, seed: 56)
        #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == expected)
        _ = await second.stop()
    }

    @Test func getSaysSoWhenTheSessionBusGoesAway() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        // Outside the bus's folder, which goes with the bus.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("haul-get-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let hauld = try await HauldProcess(bus: bus)
        let get = try CommandWithOutputFile.start(
            Command.built("haul"),
            ["get", server.url("/gen/2m?seed=57&stall-after=100000&stall-seconds=30"), "-o", bus.directory.path + "/x"],
            environment: bus.environment, output: output
        )
        try await get.waitForLines(1)
        bus.stop()
        let result = await get.finish()
        #expect(result.status == 69)
        // Whichever goes first as the bus closes its connections: hauld's name, or haul's own connection.
        let hauldLeft = "haul: hauld left the bus while following task 1; the task is saved"
        let busLost = "haul: the connection to the session bus was lost while following task 1; the task is saved"
        #expect(result.stderr.hasPrefix(hauldLeft) || result.stderr.hasPrefix(busLost), "\(result.stderr)")
        _ = await hauld.stop()
    }
}
