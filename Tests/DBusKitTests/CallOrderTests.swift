import DBusKit
import HaulTestSupport
import Testing

/// Interleaved methods: a long call lets other clients in, and holds its own client's later calls and departure.
@Suite("Call order around interleaved methods", .timeLimit(.minutes(2)))
struct CallOrderTests {
    // MARK: The pure order

    private static func call(_ member: String, from sender: String) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall)
        message.path = GatedObject.path
        message.member = member
        message.sender = sender
        return message
    }

    private static func departure(of name: String) -> DBusMessage {
        var message = DBusMessage(kind: .signal)
        message.member = "NameOwnerChanged"
        message.body = [.string(name), .string(name), .string("")]
        return message
    }

    private static func mode(_ message: DBusMessage) -> CallOrder.Mode {
        switch message.member {
        case "Long": .interleaved
        case "Create": .concurrent
        default: .serial
        }
    }

    /// "handle Long from :1.1", "departed :1.1"…
    private static func describe(_ steps: [CallOrder.Step]) -> [String] {
        steps.map { step in
            switch step {
            case .handle(let message, _): "\(message.member ?? "") \(message.sender ?? "")"
            case .departed(let name): "gone \(name)"
            }
        }
    }

    @Test func aClientsInputsWaitBehindItsInterleavedCallAndNobodyElsesDo() {
        var order = CallOrder()
        func admit(_ input: CallOrder.Input) -> [String] { Self.describe(order.admit(input, mode: Self.mode)) }

        #expect(admit(.message(Self.call("Long", from: ":1.1"))) == ["Long :1.1"])
        // Held, whatever their mode.
        #expect(admit(.message(Self.call("Mark", from: ":1.1"))) == [])
        #expect(admit(.message(Self.call("Create", from: ":1.1"))) == [])
        #expect(admit(.message(Self.call("Long", from: ":1.1"))) == [])
        #expect(admit(.message(Self.call("Mark", from: ":1.1"))) == [])
        #expect(admit(.message(Self.departure(of: ":1.1"))) == [])
        // Other clients go on, and so does a departure that is not held.
        #expect(admit(.message(Self.call("Mark", from: ":1.2"))) == ["Mark :1.2"])
        #expect(admit(.message(Self.departure(of: ":1.3"))) == ["gone :1.3"])
        // A signal that is no departure is no input.
        #expect(admit(.message(Self.departure(of: "org.example.Name"))) == [])

        // The first answer lets through everything up to the next interleaved call, which holds the rest.
        #expect(admit(.answered(sender: ":1.1")) == ["Mark :1.1", "Create :1.1", "Long :1.1"])
        #expect(admit(.message(Self.call("Mark", from: ":1.1"))) == [])
        #expect(admit(.answered(sender: ":1.1")) == ["Mark :1.1", "gone :1.1", "Mark :1.1"])
        // Nothing held any more.
        #expect(admit(.message(Self.call("Mark", from: ":1.1"))) == ["Mark :1.1"])
        #expect(admit(.answered(sender: ":1.1")) == [])
    }

    // MARK: On a bus

    @Test func otherClientsAreAnsweredWhileAnInterleavedCallWaits() async throws {
        try await GatedObject.with { fixture in
            let long = fixture.callLong(from: fixture.first)
            try await fixture.waitFor("Long \(fixture.first.uniqueName)")
            // Would wait for the gate if the server handled one call at a time.
            try await withTimeout(seconds: GatedObject.patience) { try await fixture.mark(from: fixture.second) }
            #expect(await fixture.events.values == ["Long \(fixture.first.uniqueName)", "Mark \(fixture.second.uniqueName)"])
            await fixture.gate.open()
            try await long.value
            #expect(await fixture.events.values.last == "Long done \(fixture.first.uniqueName)")
        }
    }

    @Test func theSameClientsLaterCallWaitsForItsInterleavedCall() async throws {
        try await GatedObject.with { fixture in
            let first = fixture.first.uniqueName
            let long = fixture.callLong(from: fixture.first)
            try await fixture.waitFor("Long \(first)")
            let mark = Task { [fixture] in try await fixture.mark(from: fixture.first) }
            // The server is free: another client is answered, and the first client's `Mark` is still held.
            try await withTimeout(seconds: GatedObject.patience) { try await fixture.mark(from: fixture.second) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(await !fixture.events.values.contains("Mark \(first)"))

            await fixture.gate.open()
            try await long.value
            try await mark.value
            #expect(
                await fixture.events.values == [
                    "Long \(first)", "Mark \(fixture.second.uniqueName)", "Long done \(first)", "Mark \(first)",
                ]
            )
        }
    }

    @Test func aClientsDepartureIsSeenAfterItsInterleavedCallHasAnswered() async throws {
        try await GatedObject.with { fixture in
            let leaving = try await DBusConnection.connect(address: fixture.bus.address)
            let name = leaving.uniqueName
            _ = fixture.callLong(from: leaving)
            try await fixture.waitFor("Long \(name)")
            await leaving.close()
            try await withTimeout(seconds: GatedObject.patience) { try await fixture.mark(from: fixture.second) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(await !fixture.events.values.contains("gone \(name)"))

            await fixture.gate.open()
            try await fixture.waitFor("gone \(name)")
            #expect(
                await fixture.events.values == [
                    "Long \(name)", "Mark \(fixture.second.uniqueName)", "Long done \(name)", "gone \(name)",
                ]
            )
        }
    }
}

/// An object whose interleaved `Long` waits for a gate the test opens, and whose `Mark` answers at once; each records
/// what it did, with its caller.
struct GatedObject: Sendable {
    static let path: ObjectPath = "/org/example/Gated"
    /// Seconds to wait for a call to be handled or answered. Only the gate holds a call back, so a wait that ends
    /// tells nothing by its length; 10 s ran out once while the bus tests started dozens of buses on two cores.
    static let patience = 60.0
    static let interface = "org.example.Gated"
    static let description = DBusInterfaceDescription(
        name: interface, methods: [.init("Long"), .init("Mark")]
    )

    let bus: PrivateBus
    let server: DBusConnection
    let first: DBusConnection
    let second: DBusConnection
    let events: Recorder<String>
    let gate: Gate

    /// Opened once; whoever waits for it before or after goes on.
    actor Gate {
        private var isOpen = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func wait() async {
            guard !isOpen else { return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func open() {
            isOpen = true
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    static func with(_ body: (GatedObject) async throws -> Void) async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(address: bus.address)
        let objects = try await DBusObjectServer(connection: server)
        let events = Recorder<String>()
        let gate = Gate()
        let exported = DBusExportedInterface(
            description,
            methods: [
                "Long": { call in
                    await events.append("Long \(call.sender)")
                    await gate.wait()
                    await events.append("Long done \(call.sender)")
                    return []
                },
                "Mark": { call in
                    await events.append("Mark \(call.sender)")
                    return []
                },
            ],
            interleavedMethods: ["Long"]
        )
        try await objects.export([exported], at: path)
        await objects.onPeerVanished { name in await events.append("gone \(name)") }
        let running = Task { await objects.run() }
        defer { running.cancel() }
        let fixture = GatedObject(
            bus: bus, server: server, first: try await DBusConnection.connect(address: bus.address),
            second: try await DBusConnection.connect(address: bus.address), events: events, gate: gate
        )
        // Whatever the test did, nothing waits for the gate any more.
        defer { Task { await gate.open() } }
        try await body(fixture)
        await fixture.first.close()
        await fixture.second.close()
        await server.close()
    }

    func callLong(from client: DBusConnection) -> Task<Void, any Error> {
        Task { [server] in
            _ = try await client.call(
                destination: server.uniqueName, path: Self.path, interface: Self.interface, member: "Long",
                timeout: .seconds(60)
            )
        }
    }

    func mark(from client: DBusConnection) async throws {
        _ = try await client.call(
            destination: server.uniqueName, path: Self.path, interface: Self.interface, member: "Mark",
            timeout: .seconds(Self.patience)
        )
    }

    func waitFor(_ event: String) async throws {
        try await waitUntil(
            "\(event) recorded", timeout: .seconds(Self.patience), seen: { "\(await events.values)" }
        ) {
            await events.values.contains(event)
        }
    }
}
