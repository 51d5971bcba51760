import DBusKit
import HaulTestSupport

/// A server and a client connection on a private bus, with `TestObject` exported by the server.
struct BusFixture {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    let objects: DBusObjectServer

    static let path: ObjectPath = "/org/example/Test"
    static let interface = "org.example.Test"
    static let description = DBusInterfaceDescription(
        name: interface,
        methods: [
            .init("Echo", inputs: [.init("value", .variant)], outputs: [.init("value", .variant)]),
            .init("Add", inputs: [.init("a", .int32), .init("b", .int32)], outputs: [.init("sum", .int32)]),
            .init("Fail"),
            .init("Ping2", outputs: [.init("caller", .string)]),
        ],
        signals: [.init("Tick", [.init("n", .uint32)])],
        properties: [
            .init("Counter", .uint32, access: .readwrite),
            .init("Name", .string),
            .init("Limit", .int32, access: .readwrite),
        ]
    )

    static func exported() -> DBusExportedInterface {
        DBusExportedInterface(
            description,
            methods: [
                "Echo": { call in call.arguments },
                "Add": { call in
                    guard let a = call.arguments[0].int32Value, let b = call.arguments[1].int32Value else { return [] }
                    return [.int32(a &+ b)]
                },
                "Fail": { _ in throw DBusError(name: "org.example.Error.Deliberate", message: "asked to fail") },
                "Ping2": { call in [.string(call.sender)] },
            ],
            properties: ["Counter": .uint32(0), "Name": .string("tester"), "Limit": .int32(10)],
            setProperty: { name, value, _ in
                if name == "Limit", let limit = value.int32Value, limit < 0 {
                    throw DBusError.invalidArgs("Limit cannot be negative")
                }
            }
        )
    }

    /// Runs `body` with a fresh bus and exported object, tearing everything down afterwards.
    static func with(_ body: (BusFixture) async throws -> Void) async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await DBusConnection.connect(address: bus.address)
        let client = try await DBusConnection.connect(address: bus.address)
        let objects = try await DBusObjectServer(connection: server)
        await objects.addObjectManager(at: "/org/example")
        try await objects.export([exported()], at: path)
        _ = try await server.requestName("org.example.TestService")
        let running = Task { await objects.run() }
        defer { running.cancel() }
        try await body(BusFixture(bus: bus, server: server, client: client, objects: objects))
        await client.close()
        await server.close()
    }

    func echo(_ value: DBusValue) async throws -> DBusValue? {
        try await client.call(
            destination: server.uniqueName, path: Self.path, interface: Self.interface, member: "Echo", [.variant(value)]
        ).first?.unwrappedOnceForTest
    }
}

extension DBusValue {
    var unwrappedOnceForTest: DBusValue { if case .variant(let inner) = self { inner } else { self } }
}

// MARK: Bounded waiting

/// Thrown by `withTimeout` when the operation did not finish in time.
struct TimeoutError: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "did not finish within \(seconds) s" }
}

/// Runs `operation`, failing with `TimeoutError` after `seconds`, so that a bug fails a test instead of hanging it.
///
/// The operation runs in its own task and is cancelled on timeout but not awaited: one stuck in code that ignores
/// cancellation (a continuation never resumed) is abandoned rather than blocking the test forever.
func withTimeout<T: Sendable>(
    seconds: Double, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let (results, continuation) = AsyncThrowingStream.makeStream(of: T.self)
    let work = Task {
        do {
            continuation.yield(try await operation())
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
    let timer = Task {
        try? await Task.sleep(for: .seconds(seconds))
        // Ignored when the operation has already finished the stream.
        continuation.finish(throwing: TimeoutError(seconds: seconds))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    for try await result in results { return result }
    throw CancellationError()
}

/// Collects values produced by other tasks (stream consumers, callbacks) for a test to inspect.
actor Recorder<Element: Sendable> {
    private(set) var values: [Element] = []

    func append(_ value: Element) { values.append(value) }
}

extension AsyncStream where Element: Sendable {
    /// The next `count` elements (messages, or batches of them), failing with `TimeoutError` if they do not all
    /// arrive within `seconds`.
    func next(_ count: Int, within seconds: Double) async throws -> [Element] {
        try await withTimeout(seconds: seconds) {
            var received: [Element] = []
            for await message in self {
                received.append(message)
                if received.count == count { break }
            }
            return received
        }
    }
}

/// The outcome of an async throwing operation, for tests that inspect the error.
func resultOf<T: Sendable>(_ operation: () async throws -> T) async -> Result<T, any Error> {
    do {
        return .success(try await operation())
    } catch {
        return .failure(error)
    }
}
