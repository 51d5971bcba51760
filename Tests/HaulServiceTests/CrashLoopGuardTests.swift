import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// The crash-loop guard, end to end: hauld killed (SIGKILL) while a download's attempt is in flight, twice in a row,
/// restores the task suspended with a message instead of starting it a third time; once alone, or with a clean stop
/// in between, it continues as before. The server stalls each attempt after 100 000 bytes (`stall-after`), so every
/// kill finds one in flight.
@Suite(.timeLimit(.minutes(3))) struct CrashLoopGuardTests {
    static let size = 2 * 1_048_576
    static let seed = 31
    static let task = "org.haul.Haul1.Task"

    /// hauld runs after hauld on one bus and one state folder, downloading from one server.
    struct Restarts {
        let bus: PrivateBus
        let server: TestHTTPServer
        let state: URL
        let target: String
        let client: DBusConnection

        var partialSize: Int {
            (try? FileManager.default.attributesOfItem(atPath: target + ".haul-partial")[.size] as? Int) ?? 0
        }

        func start() async throws -> HauldProcess { try await HauldProcess(bus: bus, stateDirectory: state) }

        func property(_ task: ObjectPath, _ name: String) async throws -> DBusValue {
            try await client.property(
                destination: DaemonFixture.name, path: task, interface: CrashLoopGuardTests.task, name: name)
        }

        /// Waits until the attempt in flight has stalled with at least `bytes` in the partial file.
        func waitForStall(at bytes: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while partialSize < bytes, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(partialSize >= bytes, "the attempt did not get to \(bytes) bytes")
        }

        func waitUntilCompleted(_ task: ObjectPath) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while try await property(task, "State") != .string("completed"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await property(task, "ErrorName") == .string(""))
            let expected = try await TestHTTPServer.sha256OfGenerated(
                size: CrashLoopGuardTests.size, seed: CrashLoopGuardTests.seed)
            #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == expected)
        }
    }

    static func with(stalls: Int, _ body: (Restarts, String) async throws -> Void) async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let target = bus.directory.appendingPathComponent("loop.bin").path
        let client = try await DBusConnection.connect(address: bus.address)
        let query = "/gen/\(size)?seed=\(seed)&stall-after=100000&stall-times=\(stalls)"
        try await body(Restarts(bus: bus, server: server, state: state, target: target, client: client), query)
        await client.close()
    }

    func download(_ restarts: Restarts, _ query: String) async throws -> ObjectPath {
        let reply = try await restarts.client.call(
            destination: DaemonFixture.name, path: DaemonFixture.manager, interface: "org.haul.Haul1.Manager",
            member: "Download", [.string(restarts.server.url(query)), .string(restarts.target)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    @Test func twoKillsMidAttemptRestoreTheTaskSuspendedUntilResumed() async throws {
        try await Self.with(stalls: 2) { restarts, query in
            let first = try await restarts.start()
            let task = try await download(restarts, query)
            try await restarts.waitForStall(at: 100_000)
            _ = await first.stop(signal: SIGKILL)

            let second = try await restarts.start()
            #expect(try await restarts.property(task, "State") == .string("running"), "one unclean exit: continued")
            try await restarts.waitForStall(at: 200_000)
            _ = await second.stop(signal: SIGKILL)

            let third = try await restarts.start()
            #expect(try await restarts.property(task, "State") == .string("suspended"))
            let message = try await restarts.property(task, "ErrorMessage").stringValue ?? ""
            #expect(message.contains("exited unexpectedly twice in a row"), "\(message)")
            #expect(try await restarts.property(task, "ErrorName") == .string(""), "suspended, not failed")
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await restarts.server.stats().requests(query) == 2, "not started a third time")

            _ = try await restarts.client.call(
                destination: DaemonFixture.name, path: task, interface: Self.task, member: "Resume"
            )
            #expect(try await restarts.property(task, "ErrorMessage") == .string(""), "Resume clears the message")
            try await restarts.waitUntilCompleted(task)
            let ranges = try await restarts.server.stats().ranges(query)
            #expect(ranges.count == 2 && !ranges.contains("bytes=0-"), "every start continued the file: \(ranges)")
            _ = await third.stop()
        }
    }

    /// A kill, a clean stop, a kill: never two unclean exits in a row, so the task goes on.
    @Test func aCleanStopBetweenKillsStartsTheCountAgain() async throws {
        try await Self.with(stalls: 3) { restarts, query in
            let first = try await restarts.start()
            let task = try await download(restarts, query)
            try await restarts.waitForStall(at: 100_000)
            _ = await first.stop(signal: SIGKILL)

            let second = try await restarts.start()
            try await restarts.waitForStall(at: 200_000)
            let clean = await second.stop(signal: SIGTERM)
            #expect(clean.status == 0, "\(clean.stderr)")

            let third = try await restarts.start()
            try await restarts.waitForStall(at: 300_000)
            _ = await third.stop(signal: SIGKILL)

            let fourth = try await restarts.start()
            // Continued, not held back: running, or already done (nothing stalls this fourth attempt).
            let state = try await restarts.property(task, "State")
            #expect(state == .string("running") || state == .string("completed"), "\(state)")
            #expect(try await restarts.property(task, "ErrorMessage") == .string(""))
            try await restarts.waitUntilCompleted(task)
            #expect(try await restarts.server.stats().requests(query) == 4)
            _ = await fourth.stop()
        }
    }
}
