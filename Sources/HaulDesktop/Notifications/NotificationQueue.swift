/// When a transfer notification can go out: how it is sent depends on the server's capabilities (markup in bodies,
/// actions), so they come first. A pure state machine: the owner carries out the effects and reports the answers.
///
/// The capabilities are asked once per server (again when another server takes the name); notifications that come
/// before the answer wait for it, in order. A server that does not answer gets them as plain text without actions,
/// and is asked again with the next notification. When no server owns the name, the next notification asks anyway,
/// which starts one where the bus can (a server started so takes the name first, and is asked again); if that fails
/// too, there is no one to tell, and the waiting notifications are dropped. An answer to a query made before the
/// server changed is ignored.
struct NotificationQueue: Sendable {
    /// What the server said; nil until it has answered.
    private var capabilities: NotificationCapabilities?
    private var serverPresent = false
    /// The query under way, if any.
    private var asking: UInt64?
    private var lastQuery: UInt64 = 0
    private var waiting: [TransferNotification] = []

    /// A transfer ended: it is announced now, or once the server's capabilities are known.
    mutating func add(_ notification: TransferNotification) -> [DesktopEffect] {
        if let capabilities { return [.notify(notification, capabilities)] }
        waiting.append(notification)
        return asking == nil ? [ask()] : []
    }

    /// The notification server's name has a new owner (`present`), or none: what the old one said no longer holds. A
    /// server is asked at once, so that the first notification need not wait; with none, the next notification asks
    /// (which may start one on demand).
    mutating func serverChanged(present: Bool) -> [DesktopEffect] {
        serverPresent = present
        capabilities = nil
        asking = nil
        return present || !waiting.isEmpty ? [ask()] : []
    }

    /// The server answered query `query` (nil: it did not): the waiting notifications go out, or with no server on
    /// the bus, nowhere.
    mutating func answered(query: UInt64, capabilities answer: NotificationCapabilities?) -> [DesktopEffect] {
        guard query == asking else { return [] }
        asking = nil
        capabilities = answer
        defer { waiting = [] }
        guard answer != nil || serverPresent else { return [] }
        return waiting.map { .notify($0, answer ?? .none) }
    }

    private mutating func ask() -> DesktopEffect {
        lastQuery += 1
        asking = lastQuery
        return .askNotificationCapabilities(query: lastQuery)
    }
}
