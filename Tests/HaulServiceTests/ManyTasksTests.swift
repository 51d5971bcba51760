import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// A few thousand tasks, end to end: created at once, listed by `haul ls`, kept to `MaxRunningTasks` at the server
/// through `SuspendAll` and `ResumeAll`, and answered after a restart. No timings here: `make bench` measures ten
/// thousand (the scale phase); the suite's time limit keeps this from going quadratic unnoticed.
@Suite("Many tasks", .timeLimit(.minutes(4)))
struct ManyTasksTests {
    static let count = 3_000
    static let maxRunning: UInt32 = 3
    /// A call's timeout: a `*All` over 3,000 tasks of a debug hauld, among a full parallel run on 2 cores, can take
    /// longer than libdbus's default 25 s. The suite's time limit still bounds the whole.
    static let patient: Duration = .seconds(120)

    @Test func threeThousandTasksAreListedKeptToTheLimitAndRestored() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let state = root.appendingPathComponent("state")
        let downloads = root.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let server = try await TestHTTPServer()
        defer { server.stop() }

        try await DaemonFixture.with(stateDirectory: state) { fixture in
            try await fixture.calls.set(.maxRunningTasks, to: .uint32(Self.maxRunning))
            // From four connections at once, each with calls waiting for their answers.
            let clients = try await [fixture.client] + (1..<4).asyncMap { _ in
                try await DBusConnection.connect(address: fixture.bus.address)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        for first in stride(from: index * 16, to: Self.count, by: clients.count * 16) {
                            try await withThrowingTaskGroup(of: Void.self) { calls in
                                for number in first..<min(first + 16, Self.count) {
                                    calls.addTask {
                                        try await Self.create(number, server: server, downloads: downloads, on: client)
                                    }
                                }
                                try await calls.waitForAll()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for client in clients.dropFirst() { await client.close() }

            let listed = try await haulList(fixture)
            #expect(listed == Set(1...UInt32(Self.count)))

            try await callManager(.resumeAll, fixture)
            try await waitUntil("transfers at the server", timeout: .seconds(30)) {
                try await Self.transfersAtServer(server) > 0
            }
            for _ in 0..<5 {
                #expect(try await Self.transfersAtServer(server) <= Int(Self.maxRunning))
                try await Task.sleep(for: .milliseconds(100))
            }
            // Another client is answered while the `SuspendAll` is still at work.
            #expect(try await anotherClientIsAnsweredDuring(.suspendAll, fixture))
            try await waitUntil("the server to see every transfer stop", timeout: .seconds(30)) {
                try await Self.transfersAtServer(server) == 0
            }
            try await callManager(.resumeAll, fixture)
            try await waitUntil("transfers at the server again", timeout: .seconds(30)) {
                try await Self.transfersAtServer(server) > 0
            }
            for _ in 0..<5 {
                #expect(try await Self.transfersAtServer(server) <= Int(Self.maxRunning))
                try await Task.sleep(for: .milliseconds(100))
            }
            try await callManager(.suspendAll, fixture)
        }

        // hauld again on the same state: it answers, and lists every task.
        try await DaemonFixture.with(stateDirectory: state) { fixture in
            let limit = try await fixture.calls.property(.maxRunningTasks)
            #expect(limit.unwrapped == .uint32(Self.maxRunning))
            #expect(try await haulList(fixture) == Set(1...UInt32(Self.count)))
        }
    }

    /// A suspended download of 64 MiB at 64 KiB/s, a URL of its own so that the server counts it apart.
    private static func create(
        _ number: Int, server: TestHTTPServer, downloads: URL, on client: DBusConnection
    ) async throws {
        try await HauldCalls(client).call(
            .downloadWithOptions,
            [
                .string(server.url("/gen/64m?seed=1&throttle=65536&id=\(number)")),
                .string(downloads.appendingPathComponent("\(number).bin").path),
                .vardict([DownloadOption.startSuspended.rawValue: .boolean(true)]),
            ],
            timeout: patient
        )
    }

    /// Responses the server is still sending.
    private static func transfersAtServer(_ server: TestHTTPServer) async throws -> Int {
        try await server.stats().paths.values.reduce(0) { count, entry in
            count + entry.log.filter { $0.outcome == "pending" }.count
        }
    }

    private func callManager(_ method: ManagerMethod, _ fixture: DaemonFixture) async throws {
        try await fixture.calls.call(method, timeout: Self.patient)
    }

    /// Calls `method` from the fixture's client and, once it has suspended a first task, reads a Manager property
    /// from another client: whether that answer came before the method's own.
    private func anotherClientIsAnsweredDuring(_ method: ManagerMethod, _ fixture: DaemonFixture) async throws -> Bool {
        let other = try await DBusConnection.connect(address: fixture.bus.address)
        let changes = try await other.messages(matching: [
            MatchRule(
                kind: .signal, sender: HaulBus.name, pathNamespace: HaulBus.tasksPath,
                interface: StandardInterfaces.properties.name, member: "PropertiesChanged"
            )
        ])
        let answered = Answered()
        let call = Task {
            try await callManager(method, fixture)
            await answered.set()
        }
        let suspended = DBusValue.variant(.string(TaskStateName.suspended.rawValue))
        for await change in changes
        where change.body.dropFirst().first?.stringDictionary?[TaskProperty.state.name] == suspended {
            break
        }
        _ = try await HauldCalls(other).property(.maxRunningTasks)
        let first = await !answered.value
        try await call.value
        await other.close()
        return first
    }

    /// The task numbers `haul ls` shows.
    private func haulList(_ fixture: DaemonFixture) async throws -> Set<UInt32> {
        let result = try await Command.run(Command.built("haul"), ["ls"], environment: fixture.bus.environment)
        #expect(result.status == 0, "\(result.stderr)")
        return Set(result.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.flatMap { UInt32($0) }
        })
    }
}

/// Whether a call has answered, set by the task that made it.
private actor Answered {
    private(set) var value = false
    func set() { value = true }
}

extension Sequence {
    /// `map` with an async transform, one element after the other.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
