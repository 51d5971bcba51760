import DBusKit

/// Task calls of the CLI.
extension HaulClient {
    static let managerInterface = "org.haul.Haul1.Manager"
    static let taskInterface = "org.haul.Haul1.Task"
    static let tasksPath: ObjectPath = "/org/haul/Haul1/Tasks"

    func callManager(_ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await remote {
            try await connection.call(
                destination: Self.busName, path: Self.managerPath, interface: Self.managerInterface, member: member,
                body
            )
        }
    }

    /// Calls a Manager method that creates a task, returning the task's object path.
    func startTask(_ member: String, _ body: [DBusValue]) async throws -> ObjectPath {
        guard let path = try await callManager(member, body).first?.objectPathValue else {
            throw CLIFailure.refused("hauld's reply to \(member) holds no task")
        }
        return path
    }

    func callTask(_ path: ObjectPath, _ member: String) async throws {
        do {
            _ = try await connection.call(
                destination: Self.busName, path: path, interface: Self.taskInterface, member: member
            )
        } catch let error as DBusError where error.name == "org.freedesktop.DBus.Error.UnknownObject" {
            throw CLIFailure.refused("no task \(path.rawValue.split(separator: "/").last ?? "")")
        } catch let error as DBusError {
            throw CLIFailure(error)
        }
    }

    func task(_ path: ObjectPath) async throws -> TaskInfo {
        let properties = try await remote {
            try await connection.allProperties(destination: Self.busName, path: path, interface: Self.taskInterface)
        }
        return TaskInfo(path: path, properties: properties)
    }

    func tasks() async throws -> [TaskInfo] {
        var result: [TaskInfo] = []
        for value in try await callManager("ListTasks").first?.arrayValue ?? [] {
            guard let path = value.objectPathValue else { continue }
            // A task forgotten between the list and this call is simply not shown.
            if let info = try? await task(path) { result.append(info) }
        }
        return result
    }

    static func path(ofTask id: UInt32) -> ObjectPath { tasksPath.appending(String(id)) ?? tasksPath }

    /// PropertiesChanged of task objects and the Manager's TaskDidComplete, from hauld only, and hauld's comings
    /// and goings.
    func taskChanges() async throws -> AsyncStream<DBusMessage> {
        try await connection.messages(matching: [
            MatchRule(
                kind: .signal, sender: Self.busName, pathNamespace: Self.tasksPath,
                interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arg0: Self.taskInterface
            ),
            MatchRule(
                kind: .signal, sender: Self.busName, path: Self.managerPath, interface: Self.managerInterface,
                member: "TaskDidComplete"
            ),
            // hauld restarting: what happened meanwhile must be read again.
            MatchRule(
                kind: .signal, sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arg0: Self.busName
            ),
        ])
    }
}
