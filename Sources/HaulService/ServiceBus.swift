package import DBusKit

/// What hauld's services (`TaskService`, `ActivityIndicatorService`) need of the bus: their objects exported, and
/// their changes and signals sent, in the order asked. `DBusObjectServer` in hauld; their in-process tests give a
/// recording fake that calls the exported handlers directly, as the desktop bridge's tests do with `DesktopBus`.
package protocol ServiceBus: Sendable {
    /// `announced`: whether the object manager sends `InterfacesAdded` for it.
    func export(_ interfaces: [DBusExportedInterface], at path: ObjectPath, announced: Bool) async throws
    func unexport(_ path: ObjectPath) async throws
    func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws
    func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws
    /// The changes in order, in one go; the position and error of each that failed.
    func apply(_ changes: [DBusObjectChange]) async -> [(index: Int, error: any Error)]
    /// The end of what was sent so far.
    func writeMark() async -> DBusConnection.WriteMark
    /// Returns once everything sent before `mark` has been written to the bus.
    func written(through mark: DBusConnection.WriteMark) async
}

extension ServiceBus {
    func export(_ interfaces: [DBusExportedInterface], at path: ObjectPath) async throws {
        try await export(interfaces, at: path, announced: true)
    }
}

extension DBusObjectServer: ServiceBus {
    package nonisolated func writeMark() async -> DBusConnection.WriteMark {
        await connection.writeMark()
    }

    package nonisolated func written(through mark: DBusConnection.WriteMark) async {
        await connection.written(through: mark)
    }
}
