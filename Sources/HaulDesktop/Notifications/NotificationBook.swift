/// The transfer notifications on screen that have buttons, by the id the server gave them: what an
/// `ActionInvoked` acts on. A pure value: the server's answers and signals go in, the effects of buttons come out.
///
/// The answer to `Notify` (the id) and the server's signals travel apart, so a press (or the close that follows it)
/// may arrive before the answer that names its notification: it is kept until then, and carried out when the answer
/// comes.
///
/// A notification is forgotten when the server says it closed (`NotificationClosed`) or another server takes the
/// name (ids are the server's own). Only the last ``limit`` notifications, and presses, are kept: a server that never
/// reports closing them does not make hauld remember every transfer it ever finished.
struct NotificationBook: Sendable {
    static let limit = 64

    /// Oldest first.
    private var shown: [(id: UInt32, notification: TransferNotification)] = []
    /// Presses (a key) and closes (nil) of ids not (yet) answered, oldest first.
    private var early: [(id: UInt32, key: String?)] = []

    /// The server showed `notification` as `id`: what the presses that came before the answer ask for.
    mutating func shown(_ notification: TransferNotification, id: UInt32) -> [DesktopEffect] {
        let before = early.filter { $0.id == id }
        early.removeAll { $0.id == id }
        guard !notification.actions.isEmpty else { return [] }
        shown.removeAll { $0.id == id }
        shown.append((id, notification))
        if shown.count > Self.limit { shown.removeFirst(shown.count - Self.limit) }
        let effects = before.compactMap { $0.key.flatMap { invoked(id: id, key: $0) } }
        if before.contains(where: { $0.key == nil }) { closed(id: id) }
        return effects
    }

    /// The button `key` of notification `id` was pressed: what to do, if it is one of ours and has that button.
    mutating func pressed(id: UInt32, key: String) -> DesktopEffect? {
        guard shown.contains(where: { $0.id == id }) else {
            keepEarly(id, key)
            return nil
        }
        return invoked(id: id, key: key)
    }

    mutating func closed(id: UInt32) {
        if shown.contains(where: { $0.id == id }) {
            shown.removeAll { $0.id == id }
        } else {
            keepEarly(id, nil)
        }
    }

    private mutating func keepEarly(_ id: UInt32, _ key: String?) {
        early.append((id, key))
        if early.count > Self.limit { early.removeFirst(early.count - Self.limit) }
    }

    mutating func forgetAll() {
        shown = []
        early = []
    }

    private func invoked(id: UInt32, key: String) -> DesktopEffect? {
        guard let notification = shown.last(where: { $0.id == id })?.notification,
            let action = NotificationAction(key: key), notification.actions.contains(action)
        else { return nil }
        switch action {
        case .open: return .openFile(notification.file)
        case .showInFolder: return .showInFolder(notification.file)
        case .retry: return .retryTask(notification.task)
        }
    }
}
