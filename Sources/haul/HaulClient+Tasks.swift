import DBusKit
import HaulContract

/// Task calls of the CLI.
extension HaulClient {
    func callManager(_ method: ManagerMethod, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await remote {
            try await calls.call(method, body)
        }
    }

    /// Calls a Manager method that creates a task, returning the task's object path.
    func startTask(_ method: ManagerMethod, _ body: [DBusValue]) async throws -> ObjectPath {
        guard let path = try await callManager(method, body).first?.objectPathValue else {
            throw CLIFailure.refused("hauld's reply to \(method.rawValue) holds no task")
        }
        return path
    }

    func callTask(_ path: ObjectPath, _ method: TaskMethod) async throws {
        do {
            try await calls.call(method, on: path)
        } catch let error as DBusError where error.name == "org.freedesktop.DBus.Error.UnknownObject" {
            throw CLIFailure.refused("no task \(path.rawValue.split(separator: "/").last ?? "")")
        } catch let error as DBusError {
            throw CLIFailure(error)
        }
    }

    func task(_ path: ObjectPath) async throws -> TaskInfo {
        let properties = try await remote {
            try await calls.properties(of: path)
        }
        return TaskInfo(path: path, properties: properties)
    }

    /// Every task with all its properties, in one call (`GetManagedObjects`): ten thousand tasks in one reply.
    func tasks() async throws -> [TaskInfo] {
        let objects = try await remote { try await calls.managedObjects() }
        // Read in place: hashing every object's interfaces and properties into dictionaries was a quarter of the time.
        return objects.compactMap { object in
            guard let path = object.key.objectPathValue, HaulBus.taskID(of: path) != nil,
                let task = object.value.dictionaryEntries?.first(where: { $0.key == .string(HaulBus.taskInterface) }),
                let properties = task.value.dictionaryEntries
            else { return nil }
            return TaskInfo(path: path, entries: properties)
        }
    }

    /// PropertiesChanged of task objects and the Manager's TaskDidComplete, from hauld only, and hauld's comings
    /// and goings.
    func taskChanges() async throws -> AsyncStream<DBusMessage> {
        try await connection.messages(matching: [
            MatchRule(
                kind: .signal, sender: HaulBus.name, pathNamespace: HaulBus.tasksPath,
                interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arg0: HaulBus.taskInterface
            ),
            MatchRule(
                kind: .signal, sender: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                member: ManagerSignal.taskDidComplete.rawValue
            ),
            // hauld restarting: what happened meanwhile must be read again.
            MatchRule(
                kind: .signal, sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arg0: HaulBus.name
            ),
        ])
    }
}
