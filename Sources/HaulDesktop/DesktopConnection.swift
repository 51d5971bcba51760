package import DBusKit

/// The desktop bridge's own connection to the session bus, with an object server for the tray icon when it has one.
/// (A connection of its own keeps the bridge a client: hauld's object server handles one call at a time per
/// connection, so a tray icon exported beside hauld's objects could never call them without waiting for itself.)
package struct DesktopConnection: DesktopBus {
    private let connection: DBusConnection
    private let objects: DBusObjectServer?

    /// `exportsObjects`: whether the bridge exports anything (the tray icon); without it, no object server.
    package init(connection: DBusConnection, exportsObjects: Bool) async throws {
        self.connection = connection
        objects = exportsObjects ? try await DBusObjectServer(connection: connection) : nil
    }

    package var uniqueName: String { connection.uniqueName }

    package func messages(matching rules: [MatchRule]) async throws -> AsyncStream<DBusMessage> {
        try await connection.messages(matching: rules)
    }

    package func owner(of name: String) async -> String? { try? await connection.nameOwner(name) }

    package func send(_ message: DBusMessage) throws {
        var message = message
        message.noReplyExpected = true
        try connection.enqueue(message)
    }

    package func call(_ message: DBusMessage, timeout: Duration) async throws -> [DBusValue] {
        try await connection.call(message, timeout: timeout).body
    }

    package func export(_ interface: DBusExportedInterface, at path: ObjectPath) async throws {
        try await server().export([interface], at: path)
    }

    package func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws {
        try await server().updateProperties(changes, interface: interface, at: path)
    }

    package func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws {
        try await server().emitSignal(path: path, interface: interface, member: member, body)
    }

    package func serve() async { await objects?.run() }

    package func flush() async {
        _ = try? await connection.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetId"
            ),
            timeout: .seconds(1)
        )
    }

    package func close() async { await connection.close() }

    private func server() throws -> DBusObjectServer {
        guard let objects else { throw DBusError.failed("the desktop bridge exports no objects") }
        return objects
    }
}
