import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// What libdbus's C callbacks receive as user data: a way back to the connection.
///
/// libdbus keeps a retained reference and releases it through `releaseContext` (it may call remove-watch
/// callbacks while closing, after the connection is gone — hence weak).
final class CallbackContext {
    weak var connection: DBusConnection?

    init(connection: DBusConnection) { self.connection = connection }

    /// Runs `body` on the connection's isolation; callbacks always arrive on its thread. Only Sendable values
    /// (integer keys standing for libdbus pointers) cross into `body`.
    static func with<T: Sendable>(
        _ data: UnsafeMutableRawPointer?, _ body: @Sendable (isolated DBusConnection) -> T
    ) -> T? {
        guard let data else { return nil }
        let context = Unmanaged<CallbackContext>.fromOpaque(data).takeUnretainedValue()
        guard let connection = context.connection else { return nil }
        return connection.assumeIsolated { body($0) }
    }
}

private func releaseContext(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<CallbackContext>.fromOpaque(data).release()
}

/// The connection's loop's watches and timers standing for libdbus's, keyed by the libdbus object's address.
struct MainLoopSources {
    var watches: [UInt: [UInt64]] = [:]
    var timeouts: [UInt: UInt64] = [:]
    var watchPointers: [UInt: OpaquePointer] = [:]
    var timeoutPointers: [UInt: OpaquePointer] = [:]

    mutating func cancelAll(on loop: BusLoop) {
        for id in watches.values.joined() { loop.removeWatch(id) }
        for id in timeouts.values { loop.removeTimer(id) }
        self = MainLoopSources()
    }
}

extension DBusConnection {
    func installMainLoop(context: CallbackContext) {
        let pointer = handle.pointer
        let retained = { Unmanaged.passRetained(context).toOpaque() }
        dbus_connection_set_watch_functions(
            pointer,
            { watch, data in
                let key = DBusConnection.key(watch)
                return CallbackContext.with(data) { $0.addWatch(key) } == true ? 1 : 0
            },
            { watch, data in
                let key = DBusConnection.key(watch)
                CallbackContext.with(data) { $0.removeWatch(key) }
            },
            { watch, data in
                let key = DBusConnection.key(watch)
                _ = CallbackContext.with(data) { $0.toggleWatch(key) }
            },
            retained(), releaseContext
        )
        dbus_connection_set_timeout_functions(
            pointer,
            { timeout, data in
                let key = DBusConnection.key(timeout)
                return CallbackContext.with(data) { $0.addTimeout(key) } == true ? 1 : 0
            },
            { timeout, data in
                let key = DBusConnection.key(timeout)
                CallbackContext.with(data) { $0.removeTimeout(key) }
            },
            { timeout, data in
                let key = DBusConnection.key(timeout)
                CallbackContext.with(data) { $0.toggleTimeout(key) }
            },
            retained(), releaseContext
        )
        dbus_connection_set_dispatch_status_function(
            pointer,
            { _, status, data in
                guard status == DBUS_DISPATCH_DATA_REMAINS, let data else { return }
                Unmanaged<CallbackContext>.fromOpaque(data).takeUnretainedValue().connection?.scheduleDrain()
            },
            retained(), releaseContext
        )
        dbus_connection_add_filter(
            pointer,
            { _, raw, data in
                guard let raw, let message = MessageCodec.decode(raw) else {
                    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
                }
                let taken = CallbackContext.with(data) { $0.route(message) } ?? false
                return taken ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            },
            retained(), releaseContext
        )
    }

    // MARK: Watches

    /// libdbus pointers cross isolation boundaries as their address, a Sendable integer.
    static func key(_ pointer: OpaquePointer?) -> UInt { UInt(bitPattern: pointer.map { Int(bitPattern: $0) } ?? 0) }

    /// Each watch is on a duplicate of the socket of its own, which the loop closes as it removes the watch: libdbus
    /// closes the socket as soon as it has removed the watch, and a read and a write watch of one socket could not
    /// both be in epoll's set under one descriptor.
    fileprivate func addWatch(_ key: UInt) -> Bool {
        guard let watch = OpaquePointer(bitPattern: key) else { return false }
        let socket = dbus_watch_get_unix_fd(watch)
        let flags = dbus_watch_get_flags(watch)
        var ids: [UInt64] = []
        for (flag, readiness) in [(DBUS_WATCH_READABLE, BusLoop.Readiness.readable), (DBUS_WATCH_WRITABLE, .writable)]
        where flags & flag.rawValue != 0 {
            // Close-on-exec, so that a child process cannot keep the connection open.
            let fd = fcntl(socket, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else {
                ids.forEach(loop.removeWatch)
                return false
            }
            ids.append(loop.addWatch(fd: fd, for: readiness) { [weak self] in
                self?.assumeIsolated { $0.handleWatch(key, flags: flag.rawValue) }
            })
        }
        mainLoop.watches[key] = ids
        mainLoop.watchPointers[key] = watch
        // libdbus forgets a watch it could not add.
        guard toggleWatch(key) else {
            removeWatch(key)
            return false
        }
        return true
    }

    fileprivate func removeWatch(_ key: UInt) {
        mainLoop.watches.removeValue(forKey: key)?.forEach(loop.removeWatch)
        mainLoop.watchPointers.removeValue(forKey: key)
    }

    @discardableResult
    fileprivate func toggleWatch(_ key: UInt) -> Bool {
        guard let watch = mainLoop.watchPointers[key] else { return false }
        let enabled = dbus_watch_get_enabled(watch) != 0
        return mainLoop.watches[key, default: []].allSatisfy { loop.setWatch($0, enabled: enabled) }
    }

    private func handleWatch(_ key: UInt, flags: UInt32) {
        guard let watch = mainLoop.watchPointers[key] else { return }
        dbus_watch_handle(watch, flags)
        if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { readOn(key) }
        drain()
        resumeWriteWaiters()
    }

    /// libdbus reads at most 4 KiB of the socket each time a watch is handled: a large message (a `GetManagedObjects`
    /// reply of 10,000 tasks is 9.4 MB) took thousands of turns of the loop, and a burst of signals one for every few.
    /// Reads on while the socket holds more, up to ``readsPerWake`` times, so that other work on the thread still gets
    /// its turn. A watch libdbus disabled (its incoming queue is full) or removed (the connection closed) ends it.
    private func readOn(_ key: UInt) {
        for _ in 1..<Self.readsPerWake {
            guard let watch = mainLoop.watchPointers[key], dbus_watch_get_enabled(watch) != 0 else { return }
            var waiting: Int32 = 0
            guard ioctl(dbus_watch_get_unix_fd(watch), UInt(FIONREAD), &waiting) == 0, waiting > 0 else { return }
            dbus_watch_handle(watch, UInt32(DBUS_WATCH_READABLE.rawValue))
        }
    }

    /// Up to 1 MiB a wake-up.
    static let readsPerWake = 256

    // MARK: Timeouts

    fileprivate func addTimeout(_ key: UInt) -> Bool {
        guard let timeout = OpaquePointer(bitPattern: key) else { return false }
        mainLoop.timeouts[key] = loop.addTimer { [weak self] in
            self?.assumeIsolated { $0.handleTimeout(key) }
        }
        mainLoop.timeoutPointers[key] = timeout
        toggleTimeout(key)
        return true
    }

    fileprivate func removeTimeout(_ key: UInt) {
        mainLoop.timeouts.removeValue(forKey: key).map(loop.removeTimer)
        mainLoop.timeoutPointers.removeValue(forKey: key)
    }

    /// libdbus may change the interval while a timeout is disabled: it is read again as the timeout is enabled.
    fileprivate func toggleTimeout(_ key: UInt) {
        guard let timeout = mainLoop.timeoutPointers[key], let id = mainLoop.timeouts[key] else { return }
        let enabled = dbus_timeout_get_enabled(timeout) != 0
        loop.setTimer(id, every: enabled ? .milliseconds(dbus_timeout_get_interval(timeout)) : nil)
    }

    private func handleTimeout(_ key: UInt) {
        guard let timeout = mainLoop.timeoutPointers[key] else { return }
        dbus_timeout_handle(timeout)
        drain()
        resumeWriteWaiters()
    }
}
