/// When a transfer notification can go out: a server that reads markup in bodies gets it escaped, so its capabilities
/// come first. A pure state machine: the owner carries out the effects and reports the answers.
///
/// The capabilities are asked once per server (again when another server takes the name); notifications that come
/// before the answer wait for it, in order. A server that does not answer gets them as plain text, and is asked again
/// with the next notification. An answer to a query made before the server changed is ignored.
struct NotificationQueue: Sendable {
    /// Whether the server reads markup in bodies; nil until it has answered.
    private var bodyMarkup: Bool?
    /// The query under way, if any.
    private var asking: UInt64?
    private var lastQuery: UInt64 = 0
    private var waiting: [TransferNotification] = []

    /// A transfer ended: it is announced now, or once the server's capabilities are known.
    mutating func add(_ notification: TransferNotification) -> [DesktopEffect] {
        if let bodyMarkup { return [.notify(notification, bodyMarkup: bodyMarkup)] }
        waiting.append(notification)
        return asking == nil ? [ask()] : []
    }

    /// The notification server's name has a new owner (`present`), or none: what the old one said no longer holds. A
    /// server is asked at once, so that the first notification need not wait; with none, the next notification asks
    /// (which may start one on demand).
    mutating func serverChanged(present: Bool) -> [DesktopEffect] {
        bodyMarkup = nil
        asking = nil
        return present || !waiting.isEmpty ? [ask()] : []
    }

    /// The server answered query `query` (nil: it did not): the waiting notifications go out.
    mutating func answered(query: UInt64, bodyMarkup answer: Bool?) -> [DesktopEffect] {
        guard query == asking else { return [] }
        asking = nil
        bodyMarkup = answer
        defer { waiting = [] }
        // The spec's rule when markup is not supported: plain text.
        return waiting.map { .notify($0, bodyMarkup: answer ?? false) }
    }

    private mutating func ask() -> DesktopEffect {
        lastQuery += 1
        asking = lastQuery
        return .askNotificationCapabilities(query: lastQuery)
    }
}
