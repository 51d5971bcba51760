import DBusKit
import HaulContract
import HaulTestSupport

/// The bench's bus connection to hauld: the calls it times and the log of the signals hauld emits.
struct HauldClient: Sendable {
    let connection: DBusConnection
    let signals: SignalLog

    /// Connects and, when `listening` (as a panel does), starts logging every signal from hauld's current unique
    /// name; a client that only calls receives no signal.
    static func connect(address: String, listening: Bool = true) async throws -> HauldClient {
        let connection = try await DBusConnection.connect(address: address)
        let signals = SignalLog()
        guard listening else { return HauldClient(connection: connection, signals: signals) }
        let owner = try await connection.nameOwner(HaulBus.name)
        let stream = try await connection.messages(matching: [MatchRule(kind: .signal, sender: owner)])
        // Ends with the stream, when the connection closes.
        Task {
            for await message in stream { signals.record(BusSignal(message, at: .now)) }
        }
        return HauldClient(connection: connection, signals: signals)
    }

    func close() async { await connection.close() }

    func download(_ url: String, to path: String) async throws -> ObjectPath {
        let reply = try await managerCall(.download, [.string(url), .string(path)])
        guard let task = reply.first?.objectPathValue else { throw TestSupportError("Download answered \(reply)") }
        return task
    }

    func download(_ url: String, to path: String, options: [DownloadOption: DBusValue]) async throws -> ObjectPath {
        let reply = try await managerCall(.downloadWithOptions, [.string(url), .string(path), .vardict(options.byName)])
        guard let task = reply.first?.objectPathValue else {
            throw TestSupportError("DownloadWithOptions answered \(reply)")
        }
        return task
    }

    @discardableResult
    func managerCall(_ method: ManagerMethod, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: method.rawValue, body
        )
    }

    func taskCall(_ task: ObjectPath, _ method: TaskMethod) async throws {
        _ = try await connection.call(
            destination: HaulBus.name, path: task, interface: HaulBus.taskInterface, member: method.rawValue
        )
    }

    func managerProperty(_ property: ManagerProperty) async throws -> DBusValue {
        try await connection.property(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            name: property.name
        ).unwrapped
    }

    /// `GetManagedObjects` of hauld's object manager, decoded: returns how many objects it listed.
    func managedObjects() async throws -> Int {
        let reply = try await connection.call(
            destination: HaulBus.name, path: HaulBus.rootPath, interface: StandardInterfaces.objectManager.name,
            member: "GetManagedObjects"
        )
        guard case .dictionary(_, _, let objects)? = reply.first else { return 0 }
        return objects.count
    }

    func setManager(_ property: ManagerProperty, _ value: DBusValue) async throws {
        try await connection.setProperty(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            name: property.name, value: value
        )
    }

    func indicatorCall(_ method: IndicatorMethod) async throws {
        _ = try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.indicatorInterface,
            member: method.rawValue
        )
    }

    func setIndicator(_ property: IndicatorProperty, _ value: DBusValue) async throws {
        try await connection.setProperty(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.indicatorInterface,
            name: property.name, value: value
        )
    }

    /// Waits for every task's `TaskDidComplete`; throws if one ended with an error not in `allowed` (nil: success)
    /// or the wait exceeds `timeout`.
    func completions(
        of tasks: [ObjectPath], timeout: Duration = .seconds(300), allowing allowed: [HaulErrorName?] = [nil]
    ) async throws -> [BusSignal] {
        let names = Set(allowed.map { $0?.fullName ?? "" })
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = signals.completions(of: tasks) {
                if let failed = found.first(where: { $0.errorName.map { names.contains($0) } != true }) {
                    throw TestSupportError("\(failed.task?.rawValue ?? "?") ended with \(failed.errorName ?? "?")")
                }
                return found
            }
            guard ContinuousClock.now < deadline else { throw TestSupportError("transfers did not complete") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Forgets completed tasks, so that the next round starts from an empty list.
    func forget(_ tasks: [ObjectPath]) async throws {
        for task in tasks { try await taskCall(task, .forget) }
    }
}
