package import DBusKit

/// The desktop bridge's connection to the bus, as the bridge uses it: ``DesktopConnection`` on the real bus, a
/// recording fake in the in-process tests.
package protocol DesktopBus: Sendable {
    /// The connection's unique name: what the tray icon registers with the watcher.
    var uniqueName: String { get }
    /// The incoming messages that match any of `rules`, in arrival order; the stream ends with the connection.
    func messages(matching rules: [MatchRule]) async throws -> AsyncStream<DBusMessage>
    /// The unique name that owns `name`; nil when none does, or the bus did not say.
    func owner(of name: String) async -> String?
    /// Sends a method call that wants no answer, after everything sent before it.
    func send(_ message: DBusMessage) throws
    /// Calls a method and returns the reply's values; an error reply is thrown.
    func call(_ message: DBusMessage, timeout: Duration) async throws -> [DBusValue]
    /// Exports the tray icon's object.
    func export(_ interface: DBusExportedInterface, at path: ObjectPath) async throws
    /// Changes exported properties and announces them with `PropertiesChanged`.
    func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws
    func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws
    /// Answers calls to the exported objects until the connection closes.
    func serve() async
    /// Returns once everything sent so far has left (a round trip to the bus).
    func flush() async
    func close() async
}
