import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `haul limit`, `haul status` and `--limit-rate`, run as a user would against hauld on a private bus.
@Suite(.timeLimit(.minutes(2))) struct CLILimitTests {
    func haul(_ fixture: DaemonFixture, _ arguments: [String]) async throws -> CommandResult {
        try await Command.run(Command.built("haul"), arguments, environment: fixture.bus.environment)
    }

    func managerProperty(_ fixture: DaemonFixture, _ property: ManagerProperty) async throws -> DBusValue {
        try await fixture.calls.property(property)
    }

    /// curl's spellings: a plain number is bytes, suffixes are 1024-based in either case, fractions are allowed.
    @Test func limitTakesCurlsSpellingOfRates() async throws {
        try await DaemonFixture.with { fixture throws in
            let cases: [(String, UInt64)] = [
                ("4096", 4096), ("200K", 200 * 1024), ("200k", 200 * 1024), ("1.5M", 1536 * 1024),
                ("1g", 1 << 30), ("0", 0), (".5m", 512 * 1024), ("2T", 2 << 40),
            ]
            for (spelling, bytes) in cases {
                let result = try await haul(fixture, ["limit", "--download", spelling])
                #expect(result.status == 0, "\(spelling): \(result.stderr)")
                #expect(try await managerProperty(fixture, .downloadRateLimit) == .uint64(bytes), "\(spelling)")
            }
            for spelling in ["", "K", "1.2.3", "-1", "5X", "1e6", "99999999999999999999", "16384P", "1/s"] {
                let result = try await haul(fixture, ["limit", "--upload", spelling])
                #expect(result.status == 64, "'\(spelling)' was taken")
            }
            // hauld's own rule: below 4 KiB/s is refused, with its reason.
            let small = try await haul(fixture, ["limit", "--upload", "1K"])
            #expect(small.status == 1)
            #expect(small.stderr.contains("4096"), "\(small.stderr)")
            #expect(try await managerProperty(fixture, .uploadRateLimit) == .uint64(0))
        }
    }

    @Test func limitAndStatusShowTheLimits() async throws {
        try await DaemonFixture.with { fixture throws in
            let set = try await haul(fixture, ["limit", "--download", "5M", "--upload", "512K"])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("download 5.0 MiB/s, upload 512.0 KiB/s"), "\(set.stdout)")
            let shown = try await haul(fixture, ["limit", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
            #expect(object?["download_rate_limit"] as? Int == 5 << 20)
            #expect(object?["upload_rate_limit"] as? Int == 512 << 10)
            let status = try await haul(fixture, ["status"])
            #expect(status.stdout.contains("Limits:     download 5.0 MiB/s, upload 512.0 KiB/s, running tasks 5"), "\(status.stdout)")
            // hauld on a system bus that is not there: no NetworkManager, nothing waits.
            #expect(status.stdout.contains("Network:    unknown (no NetworkManager); power saver off"), "\(status.stdout)")
            _ = try await haul(fixture, ["limit", "--max-running", "2"])
            let running = try await haul(fixture, ["limit", "--json"])
            let parsed = try JSONSerialization.jsonObject(with: Data(running.stdout.utf8)) as? [String: Any]
            #expect(parsed?["max_running_tasks"] as? Int == 2)
            _ = try await haul(fixture, ["limit", "--download", "0"])
            #expect(try await haul(fixture, ["status"]).stdout.contains("download none, upload 512.0 KiB/s"))
        }
    }

    @Test func getAndPutPassTheirLimit() async throws {
        try await TransferFixture.with { f throws in
            let environment = f.daemon.bus.environment
            let get = try await Command.run(
                Command.built("haul"),
                ["get", "--detach", "--suspended", "--limit-rate", "64K", "-o", f.file("a.bin"), f.server.url("/gen/1k")],
                environment: environment
            )
            #expect(get.status == 0, "\(get.stderr)")
            let task = try #require(ObjectPath(get.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await f.property(task, .rateLimit) == .uint64(64 * 1024))
            let source = f.folder.appendingPathComponent("up")
            try Data("x".utf8).write(to: source)
            let put = try await Command.run(
                Command.built("haul"),
                ["put", "--detach", "--limit-rate", "1M", source.path, f.server.url("/upload/cli")],
                environment: environment
            )
            #expect(put.status == 0, "\(put.stderr)")
            let uploaded = try #require(ObjectPath(put.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await f.property(uploaded, .rateLimit) == .uint64(1 << 20))
            let refused = try await Command.run(
                Command.built("haul"), ["get", "--limit-rate", "fast", f.server.url("/gen/1k")], environment: environment
            )
            #expect(refused.status == 64)
        }
    }

    /// `--background` and `--allow-metered` become the task's options, and `haul ls` shows why a task is queued.
    @Test func getPassesItsPriorityAndLsShowsTheQueue() async throws {
        try await TransferFixture.with { f throws in
            let environment = f.daemon.bus.environment
            let haul = Command.built("haul")
            #expect(try await Command.run(haul, ["limit", "--max-running", "1"], environment: environment).status == 0)
            let first = try await Command.run(
                // The server pauses its answer for good after 100 000 bytes: the first task holds the one slot.
                haul, ["get", "--detach", "-o", f.file("slow.bin"), f.server.url("/gen/1m?seed=71&stall-after=100000")],
                environment: environment
            )
            #expect(first.status == 0, "\(first.stderr)")
            let get = try await Command.run(
                haul,
                ["get", "--detach", "--background", "--allow-metered", "-o", f.file("later.bin"), f.server.url("/gen/1k")],
                environment: environment
            )
            #expect(get.status == 0, "\(get.stderr)")
            let task = try #require(ObjectPath(get.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await f.property(task, .priority) == .string(TaskPriorityName.background.rawValue))
            #expect(try await f.property(task, .allowMetered) == .boolean(true))
            let listed = try await Command.run(haul, ["ls"], environment: environment)
            #expect(listed.stdout.contains("queued:slot"), "\(listed.stdout)")
        }
    }
}
