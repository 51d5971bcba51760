import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import Testing

/// The crash-loop guard, end to end: hauld killed (SIGKILL) while a download's attempt is in flight, twice in a row,
/// restores the task suspended with a message instead of starting it a third time; once alone, it continues as
/// before (with a clean stop in between too: `TaskServicePersistenceTests`, in-process). The server stalls each
/// attempt after 100 000 bytes (`stall-after`), so every kill finds one in flight.
@Suite(.timeLimit(.minutes(3))) struct CrashLoopGuardTests {
    static let size = 2 * 1_048_576
    static let seed = 31

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

        func property(_ task: ObjectPath, _ property: TaskProperty) async throws -> DBusValue {
            try await HauldCalls(client).property(property, of: task)
        }

        /// Whether the task's record on disk says what its attempt in flight leaves: the validator the next attempt
        /// resumes with, and `runs` runs in a row cut short. hauld saves both a few milliseconds after the attempt
        /// starts, without waiting: killed before, the next start would begin the download over or count a run late.
        func recordHolds(runs: UInt32) -> Bool {
            let record = TaskStore(directory: state.appendingPathComponent("haul/tasks")).loadAll().records.first
            return record?.validator != nil && record?.interruptedRuns == runs
        }

        /// Waits until the attempt in flight has stalled with at least `bytes` in the partial file, and its record
        /// holds what a kill must find (``recordHolds(runs:)``).
        func waitForStall(at bytes: Int, runs: UInt32) async throws {
            try await waitUntil(
                "the attempt to get to \(bytes) bytes, and its record to count \(runs) runs", timeout: .seconds(30)
            ) {
                partialSize >= bytes && recordHolds(runs: runs)
            }
        }

        func waitUntilCompleted(_ task: ObjectPath) async throws {
            try await waitUntil("\(task) to complete", timeout: .seconds(60), every: .milliseconds(100)) {
                try await property(task, .state) == .state(.completed)
            }
            #expect(try await property(task, .errorName) == .string(""))
            let expected = try await TestHTTPServer.sha256OfGenerated(
                size: CrashLoopGuardTests.size, seed: CrashLoopGuardTests.seed)
            #expect(try await TestHTTPServer.sha256(ofFile: URL(fileURLWithPath: target)) == expected)
        }
    }

    static func with(stalls: Int, _ body: (Restarts, String) async throws -> Void) async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
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
        let reply = try await HauldCalls(restarts.client).call(
            .download, [.string(restarts.server.url(query)), .string(restarts.target)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    @Test func twoKillsMidAttemptRestoreTheTaskSuspendedUntilResumed() async throws {
        try await Self.with(stalls: 2) { restarts, query in
            let first = try await restarts.start()
            let task = try await download(restarts, query)
            try await restarts.waitForStall(at: 100_000, runs: 1)
            _ = await first.stop(signal: SIGKILL)

            let second = try await restarts.start()
            #expect(try await restarts.property(task, .state) == .state(.running), "one unclean exit: continued")
            try await restarts.waitForStall(at: 200_000, runs: 2)
            _ = await second.stop(signal: SIGKILL)

            let third = try await restarts.start()
            #expect(try await restarts.property(task, .state) == .state(.suspended))
            let message = try await restarts.property(task, .errorMessage).stringValue ?? ""
            #expect(message.contains("exited unexpectedly twice in a row"), "\(message)")
            #expect(try await restarts.property(task, .errorName) == .string(""), "suspended, not failed")
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await restarts.server.stats().requests(query) == 2, "not started a third time")

            try await HauldCalls(restarts.client).call(.resume, on: task)
            #expect(try await restarts.property(task, .errorMessage) == .string(""), "Resume clears the message")
            try await restarts.waitUntilCompleted(task)
            let ranges = try await restarts.server.stats().ranges(query)
            #expect(ranges.count == 2 && !ranges.contains("bytes=0-"), "every start continued the file: \(ranges)")
            _ = await third.stop()
        }
    }
}
