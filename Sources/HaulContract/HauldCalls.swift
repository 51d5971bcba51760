package import DBusKit

/// hauld's contract as typed calls over one client connection: the manager's, the indicator's and a task's methods and
/// properties, a download, the object manager's listing. The CLI, the browser's host, the test fixtures and the bench
/// call hauld through it, so that each call's destination, path and interface are spelled here once; a test that
/// sends what the contract does not allow (a wrong signature, a hostile argument) calls the connection itself.
package struct HauldCalls: Sendable {
    package let connection: DBusConnection

    package init(_ connection: DBusConnection) {
        self.connection = connection
    }

    // MARK: Manager

    @discardableResult
    package func call(
        _ method: ManagerMethod, _ body: [DBusValue] = [], timeout: Duration = DBusConnection.defaultTimeout
    ) async throws -> [DBusValue] {
        try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: method.rawValue, body, timeout: timeout
        )
    }

    package func property(_ property: ManagerProperty) async throws -> DBusValue {
        try await value(of: property.name, in: HaulBus.managerInterface, at: HaulBus.managerPath)
    }

    package func set(_ property: ManagerProperty, to value: DBusValue) async throws {
        try await set(property.name, in: HaulBus.managerInterface, at: HaulBus.managerPath, to: value)
    }

    /// Every manager property, by name.
    package func managerProperties() async throws -> [String: DBusValue] {
        try await values(in: HaulBus.managerInterface, at: HaulBus.managerPath)
    }

    /// `DownloadWithOptions`; the new task's path.
    package func download(
        _ url: String, to destination: String, options: [DownloadOption: DBusValue] = [:],
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws -> ObjectPath {
        let reply = try await call(
            .downloadWithOptions, [.string(url), .string(destination), .vardict(options.byName)], timeout: timeout
        )
        guard let task = reply.first?.objectPathValue else {
            throw DBusError.failed("\(HaulBus.managerInterface) answered a download with \(reply)")
        }
        return task
    }

    // MARK: Activity indicator

    package func call(_ method: IndicatorMethod) async throws {
        _ = try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.indicatorInterface,
            member: method.rawValue
        )
    }

    package func property(_ property: IndicatorProperty) async throws -> DBusValue {
        try await value(of: property.name, in: HaulBus.indicatorInterface, at: HaulBus.managerPath)
    }

    package func set(_ property: IndicatorProperty, to value: DBusValue) async throws {
        try await set(property.name, in: HaulBus.indicatorInterface, at: HaulBus.managerPath, to: value)
    }

    /// Every indicator property, by name.
    package func indicatorProperties() async throws -> [String: DBusValue] {
        try await values(in: HaulBus.indicatorInterface, at: HaulBus.managerPath)
    }

    // MARK: Tasks

    package func call(
        _ method: TaskMethod, on task: ObjectPath, _ body: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws {
        _ = try await connection.call(
            destination: HaulBus.name, path: task, interface: HaulBus.taskInterface, member: method.rawValue, body,
            timeout: timeout
        )
    }

    package func property(_ property: TaskProperty, of task: ObjectPath) async throws -> DBusValue {
        try await value(of: property.name, in: HaulBus.taskInterface, at: task)
    }

    package func set(_ property: TaskProperty, of task: ObjectPath, to value: DBusValue) async throws {
        try await set(property.name, in: HaulBus.taskInterface, at: task, to: value)
    }

    /// Every property of a task, by name.
    package func properties(of task: ObjectPath) async throws -> [String: DBusValue] {
        try await values(in: HaulBus.taskInterface, at: task)
    }

    /// `GetManagedObjects` of hauld's object manager: each object's path and its interfaces with their properties,
    /// in the reply's order.
    package func managedObjects() async throws -> [DBusDictEntry] {
        let reply = try await connection.call(
            destination: HaulBus.name, path: HaulBus.rootPath, interface: StandardInterfaces.objectManager.name,
            member: "GetManagedObjects"
        )
        guard let objects = reply.first?.dictionaryEntries else {
            throw DBusError.failed("GetManagedObjects answered \(reply)")
        }
        return objects
    }

    // MARK: Properties of any of the three interfaces

    private func value(of name: String, in interface: String, at path: ObjectPath) async throws -> DBusValue {
        try await connection.property(destination: HaulBus.name, path: path, interface: interface, name: name)
    }

    private func set(_ name: String, in interface: String, at path: ObjectPath, to value: DBusValue) async throws {
        try await connection.setProperty(
            destination: HaulBus.name, path: path, interface: interface, name: name, value: value
        )
    }

    private func values(in interface: String, at path: ObjectPath) async throws -> [String: DBusValue] {
        try await connection.allProperties(destination: HaulBus.name, path: path, interface: interface)
    }
}
