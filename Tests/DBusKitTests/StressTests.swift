import DBusKit
import HaulTestSupport
import Testing

/// Volume and concurrency. Every wait is bounded by a generous `withTimeout`, so that a lost reply or a deadlock
/// fails the test rather than hanging the run; nothing here asserts on speed beyond that.
@Suite("Stress: many calls, many signals, calls in both directions", .timeLimit(.minutes(5)))
struct StressTests {
    /// The timeout of each call: about deadlocks, not latency. Two thousand calls answered one at a time can take
    /// longer than libdbus's default 25 s on a loaded machine; `withTimeout` still bounds the whole.
    static let patient: Duration = .seconds(110)

    static let service = InteropTests.service

    @Test func thousandsOfConcurrentCallsAreAllAnswered() async throws {
        try await BusFixture.with { fixture in
            let second = try await DBusConnection.connect(address: fixture.bus.address)
            let clients = [fixture.client, second]
            let count = 5_000
            let wrong = try await withTimeout(seconds: 120) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<count {
                        let client = clients[index % clients.count]
                        group.addTask {
                            let a = Int32(index)
                            let b = Int32(index % 7) - 3
                            let reply = try await client.call(
                                destination: Self.service, path: BusFixture.path, interface: BusFixture.interface,
                                member: "Add", [.int32(a), .int32(b)], timeout: .seconds(100)
                            )
                            return reply == [.int32(a + b)]
                        }
                    }
                    var wrong = 0
                    for try await correct in group where !correct { wrong += 1 }
                    return wrong
                }
            }
            #expect(wrong == 0)
            await second.close()
        }
    }

    /// A message of megabytes (a `GetManagedObjects` reply of 10,000 tasks is 9.4 MB) arrives whole both ways: the
    /// connection reads on past libdbus's 4 KiB a time, within one wake-up and across several.
    @Test func aMessageOfEightMebibytesArrivesWhole() async throws {
        try await BusFixture.with { fixture in
            // 64 strings of 128 KiB, each its own letter after its number.
            let strings = (0..<64).map { index in
                let letter = String(UnicodeScalar(UInt8(ascii: "A") + UInt8(index % 26)))
                return DBusValue.string(String(index) + String(repeating: letter, count: 128 << 10))
            }
            let sent = DBusValue.array(.string, strings)
            let echoed = try await withTimeout(seconds: 60) { try await fixture.echo(sent) }
            #expect(echoed == sent)
        }
    }

    @Test func twentyThousandSignalsArriveCompleteAndInOrder() async throws {
        try await BusFixture.with { fixture in
            let ticks = try await fixture.client.messages(
                matching: [MatchRule(kind: .signal, sender: fixture.server.uniqueName, member: "Tick")]
            )
            let count = 20_000
            let objects = fixture.objects
            let emitter = Task {
                for n in 0..<UInt32(count) {
                    try await objects.emitSignal(
                        path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(n)]
                    )
                }
            }
            let received = try await withTimeout(seconds: 120) {
                var values: [UInt32] = []
                values.reserveCapacity(count)
                for await message in ticks {
                    values.append(message.body.first?.uint32Value ?? .max)
                    if values.count == count { break }
                }
                return values
            }
            try await emitter.value
            #expect(received.count == count)
            let outOfOrder = zip(received, 0..<UInt32(count)).first { $0 != $1 }
            #expect(outOfOrder == nil, "first mismatch: \(String(describing: outOfOrder))")
        }
    }

    /// Connections opened and closed by the hundred while child processes are being spawned (which briefly hold
    /// copies of every descriptor). Before each Dispatch source watched its own duplicate of the socket, libdbus
    /// closed the socket under a live source, and about one run in five crashed in Dispatch's event loop or left
    /// another connection deaf until its call timed out.
    @Test func connectionChurnAlongsideChildProcesses() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        try await withTimeout(seconds: 120) {
            try await withThrowingTaskGroup(of: Void.self) { lanes in
                for _ in 0..<3 {
                    lanes.addTask { try await Self.churn(on: bus, rounds: 200, width: 4) }
                }
                try await lanes.waitForAll()
            }
        }
    }

    private static func churn(on bus: PrivateBus, rounds: Int, width: Int) async throws {
        let spawner = Task {
            while !Task.isCancelled { _ = try? await Command.run("/bin/true", []) }
        }
        defer { spawner.cancel() }
        for _ in 0..<rounds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<width {
                    group.addTask {
                        let connection = try await DBusConnection.connect(address: bus.address)
                        #expect(try await connection.nameHasOwner(connection.uniqueName))
                        await connection.close()
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    /// Each connection exports an object and calls the other's, at the same time; one method also calls back
    /// across while it is being answered.
    @Test func callsInBothDirectionsDoNotDeadlock() async throws {
        try await BusFixture.with { fixture in
            let clientObjects = try await DBusObjectServer(connection: fixture.client)
            try await clientObjects.export([BusFixture.exported()], at: BusFixture.path)
            let running = Task { await clientObjects.run() }
            defer { running.cancel() }
            // On the server: a method whose handler calls the client's Add before answering.
            let client = fixture.client
            let server = fixture.server
            try await fixture.objects.export(
                [RelayObject.exported(server: server, target: client.uniqueName)], at: RelayObject.path
            )

            let count = 1_000
            let results = try await withTimeout(seconds: 120) {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<count {
                        let a = Int32(index)
                        group.addTask {
                            // client → server
                            let reply = try await client.call(
                                destination: server.uniqueName, path: BusFixture.path,
                                interface: BusFixture.interface, member: "Add", [.int32(a), .int32(1)],
                                timeout: Self.patient
                            )
                            return reply == [.int32(a + 1)]
                        }
                        group.addTask {
                            // server → client
                            let reply = try await server.call(
                                destination: client.uniqueName, path: BusFixture.path,
                                interface: BusFixture.interface, member: "Add", [.int32(a), .int32(2)],
                                timeout: Self.patient
                            )
                            return reply == [.int32(a + 2)]
                        }
                        if index % 10 == 0 {
                            group.addTask {
                                // client → server → client, while the client is busy calling and being called.
                                let reply = try await client.call(
                                    destination: server.uniqueName, path: RelayObject.path,
                                    interface: RelayObject.interface, member: "AddThere", [.int32(a), .int32(3)],
                                    timeout: Self.patient
                                )
                                return reply == [.int32(a + 3)]
                            }
                        }
                    }
                    var correct = 0
                    var total = 0
                    for try await ok in group {
                        total += 1
                        if ok { correct += 1 }
                    }
                    return (correct, total)
                }
            }
            #expect(results.0 == results.1)
            #expect(results.1 == 2 * count + count / 10)
        }
    }
}

/// `AddThere(ii)` answers by calling `Add` on another connection's test object.
enum RelayObject {
    static let path: ObjectPath = "/org/example/Relay"
    static let interface = "org.example.Relay"
    static let description = DBusInterfaceDescription(
        name: interface,
        methods: [
            .init("AddThere", inputs: [.init("a", .int32), .init("b", .int32)], outputs: [.init("sum", .int32)])
        ]
    )

    static func exported(server: DBusConnection, target: String) -> DBusExportedInterface {
        DBusExportedInterface(
            description,
            methods: [
                "AddThere": { call in
                    try await server.call(
                        destination: target, path: BusFixture.path, interface: BusFixture.interface, member: "Add",
                        call.arguments, timeout: StressTests.patient
                    )
                }
            ]
        )
    }
}
