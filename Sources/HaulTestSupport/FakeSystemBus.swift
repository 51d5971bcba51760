package import DBusKit
import Foundation

/// A second private `dbus-daemon` that stands in for the system bus, with fake NetworkManager, power-profiles-daemon
/// and logind on it (`scripts/fake-system-services.py`), driven by the test.
///
/// ```swift
/// let system = try await FakeSystemBus.start()
/// defer { system.stop() }
/// // hauld: HauldProcess(bus: session, environment: system.environment) — or a client: system.connect()
/// try await system.setNetwork(connectivity: 1)          // offline
/// try await system.setPresent(.networkManager, false)  // NetworkManager leaves the bus
/// try await system.emitPrepareForSleep(true)
/// let released = try await system.inhibitors().allSatisfy(\.released)
/// ```
///
/// At the start every service is present: NetworkManager online (`Connectivity` 4, `State` 70, `Metered` 4,
/// guess-no), both power-profiles names at `balanced`, logind without inhibitors.
package final class FakeSystemBus: Sendable {
    /// The services the fake plays, each on a connection of its own (so each can leave the bus alone).
    package enum Service: String, Sendable, CaseIterable {
        /// `org.freedesktop.NetworkManager`.
        case networkManager = "NetworkManager"
        /// `org.freedesktop.UPower.PowerProfiles`.
        case powerProfiles = "PowerProfiles"
        /// `net.hadess.PowerProfiles`, power-profiles-daemon's older name.
        case hadessPowerProfiles = "hadess"
        /// `org.freedesktop.login1`.
        case login = "login1"

        /// The name it owns on the bus.
        package var busName: String {
            switch self {
            case .networkManager: "org.freedesktop.NetworkManager"
            case .powerProfiles: "org.freedesktop.UPower.PowerProfiles"
            case .hadessPowerProfiles: "net.hadess.PowerProfiles"
            case .login: "org.freedesktop.login1"
            }
        }
    }

    /// How a service answers one method.
    package enum Reply: String, Sendable {
        case normal
        /// The normal answer, half a second late.
        case slow
        /// `org.freedesktop.DBus.Error.Failed`.
        case error
        /// A string instead of the declared type.
        case junk
        /// No answer: the service leaves the bus instead.
        case die
    }

    /// An inhibitor the fake logind has handed out.
    package struct Inhibitor: Sendable, Hashable {
        package let what: String
        package let who: String
        package let why: String
        package let mode: String
        /// Every copy of its file descriptor has been closed.
        package let released: Bool

        package init(what: String, who: String, why: String, mode: String, released: Bool) {
            self.what = what
            self.who = who
            self.why = why
            self.mode = mode
            self.released = released
        }
    }

    /// The bus that plays the system bus.
    package let bus: PrivateBus
    private let process: Command.Running
    private let control: DBusConnection

    private init(bus: PrivateBus, process: Command.Running, control: DBusConnection) {
        self.bus = bus
        self.process = process
        self.control = control
    }

    /// Starts the bus and the services, all present but `absent`, and waits until they own their names.
    package static func start(absent: Set<Service> = []) async throws -> FakeSystemBus {
        let bus = try await PrivateBus()
        let arguments = [scriptPath, "--address", bus.address] + absent.flatMap { ["--absent", $0.rawValue] }
        let process: Command.Running
        do {
            process = try Command.start(try TestHTTPServer.python(), arguments)
        } catch {
            bus.stop()
            throw error
        }
        do {
            let line = try await process.firstLine(timeout: 30, of: "fake-system-services.py")
            guard line == "READY" else {
                throw TestSupportError("fake-system-services.py printed \(line.debugDescription)\(process.abandon())")
            }
            let control: DBusConnection
            do {
                control = try await DBusConnection.connect(address: bus.address)
            } catch {
                throw TestSupportError("cannot reach fake-system-services.py's bus: \(error)\(process.abandon())")
            }
            let stderr = process.stderr
            Thread.detachNewThread { _ = stderr.readDataToEndOfFile() }
            return FakeSystemBus(bus: bus, process: process, control: control)
        } catch {
            bus.stop()
            throw error
        }
    }

    /// The bus's address, for `DBUS_SYSTEM_BUS_ADDRESS`.
    package var address: String { bus.address }

    /// What a child process (hauld) needs to take this bus for the system bus: `DBUS_SYSTEM_BUS_ADDRESS`.
    package var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": bus.address] }

    /// A new client connection to this bus.
    package func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(address: bus.address)
    }

    // MARK: Controls

    /// Sets NetworkManager's properties (those given) and emits one `PropertiesChanged` for them.
    package func setNetwork(connectivity: UInt32? = nil, state: UInt32? = nil, metered: UInt32? = nil) async throws {
        var values: [String: DBusValue] = [:]
        values["Connectivity"] = connectivity.map(DBusValue.uint32)
        values["State"] = state.map(DBusValue.uint32)
        values["Metered"] = metered.map(DBusValue.uint32)
        try await setProperties(.networkManager, values)
    }

    /// Sets power-profiles-daemon's `ActiveProfile` under one of its names.
    package func setActiveProfile(_ profile: String, on service: Service = .powerProfiles) async throws {
        try await setProperties(service, ["ActiveProfile": .string(profile)])
    }

    /// Sets properties with any type at all (junk included) and removes others, then emits one `PropertiesChanged`
    /// (the removed ones listed as invalidated).
    package func setProperties(_ service: Service, _ values: [String: DBusValue], removing: [String] = [])
        async throws
    {
        try await call("SetProperties", [.string(service.rawValue), .vardict(values), .strings(removing)])
    }

    /// Makes a service leave the bus (its name released, its connection closed) or come back (a new connection,
    /// with the properties it had).
    package func setPresent(_ service: Service, _ present: Bool) async throws {
        try await call("SetPresent", [.string(service.rawValue), .boolean(present)])
    }

    /// How `service` answers calls of `member` (`Get`, `GetAll`, `Inhibit`) from now on.
    package func setReply(_ service: Service, member: String, _ reply: Reply) async throws {
        try await call("SetReply", [.string(service.rawValue), .string(member), .string(reply.rawValue)])
    }

    /// logind emits `PrepareForSleep(starting)`.
    package func emitPrepareForSleep(_ starting: Bool) async throws {
        try await emitPrepareForSleep(raw: .boolean(starting))
    }

    /// logind emits `PrepareForSleep` with any argument at all (junk included).
    package func emitPrepareForSleep(raw value: DBusValue) async throws {
        try await call("EmitPrepareForSleep", [.variant(value)])
    }

    /// Every inhibitor logind has handed out, in order.
    package func inhibitors() async throws -> [Inhibitor] {
        let reply = try await call("Inhibitors", [])
        guard let entries = reply.first?.arrayValue else { throw TestSupportError("Inhibitors answered \(reply)") }
        return try entries.map { entry in
            guard case .structure(let fields) = entry, fields.count == 5,
                let what = fields[0].stringValue, let who = fields[1].stringValue, let why = fields[2].stringValue,
                let mode = fields[3].stringValue, let released = fields[4].boolValue
            else { throw TestSupportError("Inhibitors answered \(reply)") }
            return Inhibitor(what: what, who: who, why: why, mode: mode, released: released)
        }
    }

    /// How many calls of `member` (`Get`, `GetAll`, `Inhibit`) `service` has received.
    package func calls(_ service: Service, member: String) async throws -> Int {
        let reply = try await call("Calls", [.string(service.rawValue), .string(member)])
        guard let count = reply.first?.uint32Value else { throw TestSupportError("Calls answered \(reply)") }
        return Int(count)
    }

    /// Whether `service` is on the bus.
    package func isPresent(_ service: Service) async throws -> Bool {
        try await control.nameHasOwner(service.busName)
    }

    /// Polls `inhibitors()` until `condition` holds; returns the last answer either way.
    package func inhibitors(
        timeout: Duration = .seconds(5), until condition: ([Inhibitor]) -> Bool
    ) async throws -> [Inhibitor] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let inhibitors = try await inhibitors()
            if condition(inhibitors) || ContinuousClock.now >= deadline { return inhibitors }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @discardableResult
    private func call(_ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await control.call(
            destination: "org.haul.Test.FakeSystem", path: "/org/haul/Test/FakeSystem",
            interface: "org.haul.Test.FakeSystem", member: member, body, timeout: .seconds(10)
        )
    }

    /// Stops the services and the bus. Idempotent; also done on deinit.
    package func stop() {
        if process.isRunning {
            kill(process.pid, SIGTERM)
            _ = process.wait()
        }
        bus.stop()
    }

    deinit {
        let control = control
        Task { await control.close() }
        stop()
    }

    /// `scripts/fake-system-services.py`, found from this source file.
    static var scriptPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/fake-system-services.py").path
    }
}
