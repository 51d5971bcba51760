import CDBus

/// How far the bus has read what the connection sent: a service sending thousands of messages at once waits here
/// between batches, so that what it queues never runs far ahead of what the bus has read. libdbus's outgoing queue
/// is one line, and an answer to another client waits behind every message queued before it.
extension DBusConnection {
    /// A point in the connection's outgoing stream: what was sent before it, in bytes.
    public struct WriteMark: Sendable, Comparable {
        let bytes: UInt64

        public static func < (lhs: WriteMark, rhs: WriteMark) -> Bool { lhs.bytes < rhs.bytes }
    }

    /// The end of what was sent so far, `enqueue`d messages too: they reach libdbus on this thread, in order, before
    /// this call runs.
    public func writeMark() -> WriteMark { WriteMark(bytes: handedBytes) }

    /// Returns once the bus has read every message sent before `mark` (libdbus wrote it to the socket), or once the
    /// connection is closed or lost. Messages sent after the mark may still wait: a service waits for the batch
    /// before the one it just sent, and the bus reads one while the service makes the next.
    public func written(through mark: WriteMark) async {
        guard isConnected, !isWritten(through: mark) else { return }
        await withCheckedContinuation { writeWaiters.append((mark, $0)) }
    }

    /// Returns once the bus has read everything sent so far, or once the connection is closed or lost.
    public func written() async {
        await written(through: writeMark())
    }

    /// Whether everything before `mark` has left libdbus's queue. libdbus counts each queued message's size until it
    /// is written in full; the queue empty covers a message sent with file descriptors, which `handedBytes` leaves out.
    private func isWritten(through mark: WriteMark) -> Bool {
        let queued = UInt64(dbus_connection_get_outgoing_size(handle.pointer))
        return queued == 0 || handedBytes >= queued && handedBytes - queued >= mark.bytes
    }

    /// Resumes the callers of `written(through:)` whose mark the bus has read past. Called wherever libdbus may have
    /// written: after sending, and after handling a watch or a timeout.
    func resumeWriteWaiters() {
        guard !writeWaiters.isEmpty else { return }
        let connected = isConnected
        var waiting: [(mark: WriteMark, continuation: CheckedContinuation<Void, Never>)] = []
        var ready: [CheckedContinuation<Void, Never>] = []
        for waiter in writeWaiters {
            if !connected || isWritten(through: waiter.mark) {
                ready.append(waiter.continuation)
            } else {
                waiting.append(waiter)
            }
        }
        writeWaiters = waiting
        for continuation in ready { continuation.resume() }
    }
}

extension MessageCodec.Encoded {
    /// The bytes libdbus counts in its outgoing queue for this message, or 0 when it carries file descriptors
    /// (built by libdbus, its size unknown here).
    var byteCount: UInt64 {
        switch self {
        case .marshalled(let bytes): UInt64(bytes.count)
        case .withFileDescriptors: 0
        }
    }
}
