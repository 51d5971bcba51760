import CDBus

/// Owns one reference to a private libdbus connection.
///
/// `@unchecked Sendable` is safe because: the pointer is immutable; libdbus connections are internally
/// locked once `dbus_threads_init_default()` has run (which `open` guarantees); and every call through
/// `pointer` is made on the owning `DBusConnection`'s thread (``BusLoop``), so libdbus never sees two threads at once.
final class ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    /// A private connection must be closed before its last reference goes (libdbus aborts otherwise).
    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    /// Connects and registers with the bus (the `Hello` call). Blocking: call it on the connection's thread,
    /// never on the Swift concurrency pool.
    static func open(address: String) throws(DBusError) -> (ConnectionHandle, uniqueName: String) {
        dbus_threads_init_default()
        var error = DBusErrorStorage()
        defer { error.free() }
        guard let pointer = dbus_connection_open_private(address, &error.raw) else {
            throw error.swiftError(fallback: "cannot connect to the bus at \(address)")
        }
        let handle = ConnectionHandle(pointer: pointer)
        dbus_connection_set_exit_on_disconnect(pointer, 0)
        guard dbus_bus_register(pointer, &error.raw) != 0, let name = dbus_bus_get_unique_name(pointer) else {
            throw error.swiftError(fallback: "the bus at \(address) refused registration")
        }
        return (handle, String(cString: name))
    }
}

/// A libdbus `DBusError` on the stack, freed by its owner.
struct DBusErrorStorage {
    var raw = CDBus.DBusError()

    init() { dbus_error_init(&raw) }

    mutating func free() { dbus_error_free(&raw) }

    func swiftError(fallback: String) -> DBusKit.DBusError {
        guard let name = raw.name else { return .failed(fallback) }
        return DBusKit.DBusError(name: String(cString: name), message: raw.message.map { String(cString: $0) } ?? "")
    }
}
