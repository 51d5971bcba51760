import DBusKit

/// What the task service needs of the bus: its objects exported and their changes and signals sent, in the order asked.
/// `DBusObjectServer` in hauld; a test may give a recording fake, as the desktop bridge's tests do with `DesktopBus`.
protocol TaskBus: Sendable {
    func export(_ interfaces: [DBusExportedInterface], at path: ObjectPath) async throws
    func unexport(_ path: ObjectPath) async throws
    func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws
    func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws
}

extension DBusObjectServer: TaskBus {}
