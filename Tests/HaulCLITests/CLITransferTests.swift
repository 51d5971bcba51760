import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `haul get`, `put`, `ls`, `suspend`, `resume`, `cancel`, `forget` and `watch`, run as a user would.
@Suite(.timeLimit(.minutes(2))) struct CLITransferTests {
    func haul(_ f: TransferFixture, _ arguments: [String]) async throws -> CommandResult {
        try await Command.run(Command.built("haul"), arguments, environment: f.daemon.bus.environment)
    }

    @Test func getDownloadsAndExitsZero() async throws {
        try await TransferFixture.with { f throws in
            let result = try await haul(f, ["get", f.server.url("/gen/300k?seed=31"), "-o", f.file("cli.bin")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("#1 cli.bin"))
            #expect(try await f.sha256(of: "cli.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 300 * 1024, seed: 31)))
        }
    }

    /// Without `-o`, as `curl -OJ`: into the current folder, under the name hauld chooses from the server's
    /// `Content-Disposition`; with `-o DIR/`, into DIR.
    @Test func getWithoutOutputSavesHereUnderTheServersName() async throws {
        try await TransferFixture.with { f throws in
            let url = f.server.url(
                TestHTTPServer.generatedPath(
                    size: 3000, seed: 19, contentDisposition: Array("attachment; filename=\"from server.bin\"".utf8)
                )
            )
            let here = try await Command.run(
                "/bin/sh", ["-c", "cd \"$0\" && exec \"$1\" get \"$2\"", f.folder.path, Command.built("haul"), url],
                environment: f.daemon.bus.environment
            )
            #expect(here.status == 0, "\(here.stderr)")
            #expect(here.stdout.contains("from server.bin"), "\(here.stdout)")
            #expect(FileManager.default.fileExists(atPath: f.file("from server.bin")))
            let sub = f.folder.appendingPathComponent("sub")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            let into = try await haul(f, ["get", url, "-o", sub.path + "/"])
            #expect(into.status == 0, "\(into.stderr)")
            #expect(FileManager.default.fileExists(atPath: sub.appendingPathComponent("from server.bin").path))
        }
    }

    @Test func getSplitsAcrossConnectionsWithX() async throws {
        try await TransferFixture.with { f throws in
            let query = "/gen/4m?seed=33"
            let result = try await haul(f, ["get", "-x", "4", f.server.url(query), "-o", f.file("x4.bin")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try await f.property(HaulBus.taskPath(1), .connections) == .uint32(4))
            #expect(try await f.server.stats().requests(query) >= 4)
            #expect(try await f.sha256(of: "x4.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 4 << 20, seed: 33)))
            let refused = try await haul(f, ["get", "--connections", "17", f.server.url(query), "-o", f.file("x17.bin")])
            #expect(refused.status == 64, "a usage error")
        }
    }

    @Test func aFailedDownloadExitsOneWithTheErrorName() async throws {
        try await TransferFixture.with { f throws in
            let result = try await haul(f, ["get", f.server.url("/nothing?status=404"), "-o", f.file("404.bin")])
            #expect(result.status == 1)
            #expect(result.stderr.contains(HaulErrorName.http.fullName))
            let exists = try await haul(f, ["get", f.server.url("/gen/1k"), "-o", f.file("404.bin.missing/x")])
            #expect(exists.status == 1)
            #expect(exists.stderr.contains(HaulErrorName.notFound.fullName))
        }
    }

    @Test func controlCommandsActOnTasksByNumber() async throws {
        try await TransferFixture.with { f throws in
            let detached = try await haul(
                f, ["get", f.server.url("/gen/4m?seed=32&throttle=500000"), "-o", f.file("ctl.bin"), "--detach"]
            )
            #expect(detached.status == 0)
            #expect(detached.stdout == HaulBus.taskPath(1).rawValue + "\n")
            let task = HaulBus.taskPath(1)
            #expect(try await haul(f, ["suspend", "1"]).status == 0)
            #expect(try await f.property(task, .state) == .state(.suspended))
            let listed = try await haul(f, ["ls", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            #expect(object?["state"] as? String == TaskStateName.suspended.rawValue)
            #expect(object?["id"] as? Int == 1)
            #expect(try await haul(f, ["resume", "--all"]).status == 0)
            #expect(try await f.property(task, .state) == .state(.running))
            #expect(try await haul(f, ["cancel", "1"]).status == 0)
            try await f.wait(task, until: .completed)
            let again = try await haul(f, ["cancel", "1"])
            #expect(again.status == 1 && again.stderr.contains("TaskCompleted"))
            let unknown = try await haul(f, ["suspend", "99"])
            #expect(unknown.status == 1 && unknown.stderr.contains("no task 99"))
            #expect(try await haul(f, ["forget", "--completed"]).status == 0)
            #expect(try await haul(f, ["ls"]).stdout == "no transfers\n")
        }
    }

    @Test func watchFollowsATaskToItsEnd() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download("/gen/1m?seed=33&throttle=1000000", to: "watch.bin")
            let result = try await haul(f, ["watch", "1", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = try result.stdout.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
            }
            #expect(lines.last?["state"] as? String == TaskStateName.completed.rawValue)
            #expect(lines.last?["bytes"] as? Int == 1 << 20)
            #expect(try await f.property(task, .state) == .state(.completed))
        }
    }

    @Test func putUploadsAFile() async throws {
        try await TransferFixture.with { f throws in
            let source = f.folder.appendingPathComponent("up.bin")
            try await TestHTTPServer.writeGenerated(size: 500 * 1024, seed: 34, to: source)
            let result = try await haul(f, ["put", source.path, f.server.url("/upload/cli.bin"), "--post"])
            #expect(result.status == 0, "\(result.stderr)")
            let upload = try await f.server.stats().uploads("/upload/cli.bin").last
            #expect(upload?.method == "POST")
            #expect(upload?.sha256 == (try await TestHTTPServer.sha256(ofFile: source)))
        }
    }

    @Test func ctrlCDetachesAndTheTransferGoesOn() async throws {
        try await TransferFixture.with { f throws in
            // The server's first response pauses after 300 000 bytes for an hour: the Ctrl-C finds the transfer running,
            // however loaded the machine (haul sends it once 100 000 bytes are in).
            let query = "/gen/2m?seed=35&stall-after=300000"
            let get = try Command.start(
                Command.built("haul"), ["get", f.server.url(query), "-o", f.file("bg.bin")],
                environment: f.daemon.bus.environment
            )
            let task = HaulBus.taskPath(1)
            try await f.wait(task, received: 100_000)
            try #require(try await f.property(task, .state) == .state(.running), "paused by the server, not done")
            kill(get.pid, SIGINT)
            let result = await Command.finish(get)
            #expect(result.status == 130)
            #expect(result.stderr.contains("haul watch 1"))
            #expect(try await f.property(task, .state) == .state(.running), "the transfer goes on in hauld")
            // Past the pause: a new request continues from the bytes on disk, and the server pauses only once.
            try await f.taskCall(task, .suspend)
            try await f.taskCall(task, .resume)
            try await f.wait(task, until: .completed, timeout: .seconds(60))
            #expect(try await f.sha256(of: "bg.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 2 << 20, seed: 35)))
        }
    }

    @Test func watchSaysSoWhenHauldIsKilledAndFollowsTheTaskAgainOnceItIsBack() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = bus.directory.appendingPathComponent("state")
        let target = bus.directory.appendingPathComponent("restart.bin").path
        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        let started = try await Command.run(
            // The server's first response pauses for an hour after 100,000 bytes: hauld is killed mid-transfer however
            // loaded the machine, and the restarted one continues with a request that does not pause.
            Command.built("haul"),
            ["get", server.url("/gen/2m?seed=36&stall-after=100000"), "-o", target, "--detach"],
            environment: bus.environment
        )
        #expect(started.status == 0)
        let watch = try CommandWithOutputFile.start(
            Command.built("haul"), ["watch", "1"], environment: bus.environment,
            output: bus.directory.appendingPathComponent("watch.out")
        )
        // The first progress line is printed once watch is subscribed.
        try await watch.waitForLines(1)
        _ = await first.stop(signal: SIGKILL)
        let left = await watch.finish()
        #expect(left.status == 69)
        #expect(left.stderr.contains("hauld left the bus while following task 1; the task is saved"), "\(left.stderr)")
        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        let result = try await Command.run(Command.built("haul"), ["watch", "1"], environment: bus.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == (try await TestHTTPServer.sha256OfGenerated(size: 2 << 20, seed: 36)))
        _ = await second.stop()
    }
}
