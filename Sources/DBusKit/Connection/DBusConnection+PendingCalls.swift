import CDBus

/// A method call waiting for its reply. Lives on the connection's thread only.
final class PendingCall {
    let pointer: OpaquePointer
    private var continuation: CheckedContinuation<DBusMessage, any Error>?

    init(pointer: OpaquePointer, continuation: CheckedContinuation<DBusMessage, any Error>) {
        self.pointer = pointer
        self.continuation = continuation
    }

    /// Resumes the waiting task once; later completions (libdbus's own, after a close) are ignored.
    func finish(_ result: Result<DBusMessage, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }
}

/// User data of a pending call's notify callback: the connection and the call's serial.
private final class PendingCallContext {
    weak var connection: DBusConnection?
    let serial: UInt32

    init(connection: DBusConnection, serial: UInt32) {
        self.connection = connection
        self.serial = serial
    }
}

extension DBusConnection {
    /// Keeps `continuation` until libdbus reports the reply, a timeout or a disconnection.
    ///
    /// libdbus holds its own reference to the pending call until it completes or is cancelled; ours is dropped
    /// here, so nothing leaks whichever way the call ends.
    func registerPendingCall(
        _ key: UInt, serial: UInt32, continuation: CheckedContinuation<DBusMessage, any Error>
    ) {
        guard let pending = OpaquePointer(bitPattern: key) else { return }
        pendingCalls[serial] = PendingCall(pointer: pending, continuation: continuation)
        let context = Unmanaged.passRetained(PendingCallContext(connection: self, serial: serial)).toOpaque()
        dbus_pending_call_set_notify(
            pending,
            { pending, data in
                guard let pending, let data else { return }
                let context = Unmanaged<PendingCallContext>.fromOpaque(data).takeUnretainedValue()
                let reply = dbus_pending_call_steal_reply(pending)
                defer { if let reply { dbus_message_unref(reply) } }
                let decoded = reply.flatMap(MessageCodec.decode)
                let serial = context.serial
                context.connection?.assumeIsolated { $0.completeCall(serial: serial, reply: decoded) }
            },
            context,
            { data in data.map { Unmanaged<PendingCallContext>.fromOpaque($0).release() } }
        )
        dbus_pending_call_unref(pending)
    }

    private func completeCall(serial: UInt32, reply: DBusMessage?) {
        guard let call = pendingCalls.removeValue(forKey: serial) else { return }
        // The messages that came before the reply reach their streams before the caller goes on.
        deliverRouted()
        if let reply {
            call.finish(.success(reply))
        } else {
            call.finish(.failure(DBusError.failed("the reply could not be decoded")))
        }
    }

    func cancelCall(serial: UInt32) {
        guard let call = pendingCalls.removeValue(forKey: serial) else { return }
        call.finish(.failure(CancellationError()))
        dbus_pending_call_cancel(call.pointer)
    }

    func failPendingCalls(_ error: DBusError) {
        let calls = pendingCalls
        pendingCalls = [:]
        for call in calls.values {
            call.finish(.failure(error))
        }
    }
}
