import DBusKit
import HaulContract
import HaulTestSupport
import Testing
@testable import HaulService

/// `RecordingServiceBus` answers and signals as `DBusObjectServer` does on a real bus: one script of exports, changes,
/// signals, calls and property writes, run against both, gives the same replies, the same errors and the same signals,
/// in the same order. The in-process service tests assert on what the fake hands out; this holds it to the server.
@Suite(.timeLimit(.minutes(3))) struct RecordingServiceBusTests {
    /// What a client does to the exported objects: over the bus, or through the fake.
    protocol Client: Sendable {
        func call(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws -> [DBusValue]
        func property(path: ObjectPath, interface: String, name: String) async throws -> DBusValue
        func setProperty(path: ObjectPath, interface: String, name: String, value: DBusValue) async throws
    }

    /// A client on its own connection to the server's.
    struct BusClient: Client {
        let connection: DBusConnection
        let server: String

        func call(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws
            -> [DBusValue]
        {
            try await connection.call(destination: server, path: path, interface: interface, member: member, body)
        }

        func property(path: ObjectPath, interface: String, name: String) async throws -> DBusValue {
            try await connection.property(destination: server, path: path, interface: interface, name: name)
        }

        func setProperty(path: ObjectPath, interface: String, name: String, value: DBusValue) async throws {
            try await connection.setProperty(
                destination: server, path: path, interface: interface, name: name, value: value
            )
        }
    }

    /// An error that is no `DBusError`, as a handler may throw.
    struct Broken: Error {}

    /// What the script saw: each step's reply or error, then every signal up to the last, `InterfacesRemoved`.
    struct Transcript: Equatable {
        var replies: [Result<[DBusValue], DBusError>] = []
        var signals: [Signal] = []
        /// The positions `apply` reported failed.
        var failedChanges: [Int] = []
    }

    struct Signal: Equatable {
        let path: ObjectPath?
        let interface: String?
        let member: String?
        let body: [DBusValue]
    }

    static let path = HaulBus.managerPath
    static let interface = HaulBus.indicatorInterface

    /// The indicator's interface, with a handler that fails as no `DBusError` and a setter that refuses.
    static let exported = DBusExportedInterface(
        HaulInterfaces.activityIndicator,
        methods: IndicatorMethod.handlers([
            .incrementActivityCount: { _ in [] },
            .decrementActivityCount: { _ in throw Broken() },
        ]),
        properties: IndicatorProperty.values([
            .visible: .boolean(false), .state: .state(.notActive), .activityCount: .uint32(0),
            .enabled: .boolean(true), .activationDelay: .double(1), .completionDelay: .double(0.17),
        ]),
        setProperty: { name, value, _ in
            if value == .double(-1) { throw DBusError.invalidArgs("\(name) cannot be negative") }
        }
    )

    /// The script: what the services do to `bus` and what a client asks of it; what came back and what was signalled.
    static func run(_ bus: any ServiceBus, _ client: any Client, signals: AsyncStream<DBusMessage>) async throws
        -> Transcript
    {
        var transcript = Transcript()
        func step(_ body: () async throws -> [DBusValue]) async {
            do {
                transcript.replies.append(.success(try await body()))
            } catch let error as DBusError {
                transcript.replies.append(.failure(error))
            } catch {
                Issue.record("not a DBusError: \(error)")
            }
        }
        func get(_ name: String) async {
            await step { [try await client.property(path: path, interface: interface, name: name)] }
        }
        func set(_ property: IndicatorProperty, _ value: DBusValue, at path: ObjectPath = path) async {
            await step {
                try await client.setProperty(path: path, interface: interface, name: property.name, value: value)
                return []
            }
        }
        try await bus.export([exported], at: path)
        try await bus.updateProperties(
            [IndicatorProperty.visible.name: .boolean(true), IndicatorProperty.enabled.name: .boolean(true)],
            interface: interface, at: path
        )
        try await bus.updateProperties([IndicatorProperty.visible.name: .boolean(true)], interface: interface, at: path)
        try await bus.emitSignal(
            path: path, interface: interface, member: IndicatorSignal.visibilityChanged.rawValue, [.boolean(true)]
        )
        // Several changes in one go, the third refused (a signal the interface does not declare); the first is every
        // property in the contract's order, two of them changed.
        transcript.failedChanges = await bus.apply([
            .allProperties(
                IndicatorProperty.allCases.map { property in
                    switch property {
                    case .visible, .enabled: .boolean(true)
                    case .state: .state(.active)
                    case .activityCount: .uint32(2)
                    case .activationDelay: .double(1)
                    case .completionDelay: .double(0.17)
                    }
                },
                interface: interface, at: path
            ),
            .properties([IndicatorProperty.activityCount.name: .uint32(3)], interface: interface, at: path),
            .signal(path: path, interface: interface, member: "Missing", []),
            .signal(
                path: path, interface: interface, member: IndicatorSignal.visibilityChanged.rawValue, [.boolean(false)]
            ),
        ]).map(\.index)
        await step {
            try await client.call(
                path: path, interface: interface, member: IndicatorMethod.incrementActivityCount.rawValue, []
            )
        }
        await step {
            try await client.call(
                path: path, interface: interface, member: IndicatorMethod.decrementActivityCount.rawValue, []
            )
        }
        await step {
            try await client.call(
                path: path, interface: interface, member: IndicatorMethod.incrementActivityCount.rawValue,
                [.uint32(1)]
            )
        }
        await step { try await client.call(path: path, interface: interface, member: "Unknown", []) }
        await step { try await client.call(path: .root, interface: interface, member: "Unknown", []) }
        await step { try await client.call(path: path, interface: HaulBus.taskInterface, member: "Unknown", []) }
        await get(IndicatorProperty.visible.name)
        await get("Unknown")
        await set(.visible, .boolean(false))
        await set(.enabled, .string("no"))
        await set(.activationDelay, .double(-1))
        await set(.activationDelay, .double(2))
        await set(.activationDelay, .double(2), at: .root)
        await get(IndicatorProperty.activationDelay.name)
        try await bus.unexport(path)
        for await message in signals {
            transcript.signals.append(
                Signal(path: message.path, interface: message.interface, member: message.member, body: message.body)
            )
            if message.member == "InterfacesRemoved" { break }
        }
        return transcript
    }

    @Test func theFakeAnswersAndSignalsAsTheObjectServerDoes() async throws {
        let fake = RecordingServiceBus(objectManager: HaulBus.rootPath)
        let recorded = try await Self.run(fake, fake, signals: fake.signals)

        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(address: bus.address)
        let client = try await DBusConnection.connect(address: bus.address)
        let objects = try await DBusObjectServer(connection: server)
        await objects.addObjectManager(at: HaulBus.rootPath)
        let signals = try await client.messages(matching: [MatchRule(kind: .signal, sender: server.uniqueName)])
        let serving = Task { await objects.run() }
        let onTheBus = try await Self.run(
            objects, BusClient(connection: client, server: server.uniqueName), signals: signals
        )
        serving.cancel()
        await client.close()
        await server.close()

        #expect(recorded.replies == onTheBus.replies)
        let errors = onTheBus.replies.map { reply -> Substring? in
            guard case .failure(let error) = reply else { return nil }
            return error.name.split(separator: ".").last
        }
        #expect(errors == [
            nil, "Failed", "InvalidArgs", "UnknownMethod", "UnknownObject", "UnknownInterface", nil, "UnknownProperty",
            "PropertyReadOnly", "InvalidArgs", "InvalidArgs", nil, "UnknownObject", nil,
        ])
        #expect(onTheBus.replies.last == .success([.double(2)]))
        #expect(recorded.signals == onTheBus.signals)
        #expect(recorded.failedChanges == [2] && onTheBus.failedChanges == [2])
        #expect(recorded.signals.map(\.member) == [
            "InterfacesAdded", "PropertiesChanged", IndicatorSignal.visibilityChanged.rawValue, "PropertiesChanged",
            "PropertiesChanged", IndicatorSignal.visibilityChanged.rawValue, "PropertiesChanged", "InterfacesRemoved",
        ])
    }
}

extension RecordingServiceBus: RecordingServiceBusTests.Client {}
