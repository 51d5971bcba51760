/// The transfer notifications on screen that have buttons, by the id the server gave them: what an
/// `ActionInvoked` acts on. A pure value: the server's answers and signals go in, the effect of a button comes out.
///
/// A notification is forgotten when the server says it closed (`NotificationClosed`) or another server takes the
/// name (ids are the server's own). Only the last ``limit`` are kept: a server that never reports closing them
/// does not make hauld remember every transfer it ever finished.
struct NotificationBook: Sendable {
    static let limit = 64

    /// Oldest first.
    private var shown: [(id: UInt32, notification: TransferNotification)] = []

    /// The server showed `notification` as `id`.
    mutating func shown(_ notification: TransferNotification, id: UInt32) {
        guard !notification.actions.isEmpty else { return }
        shown.removeAll { $0.id == id }
        shown.append((id, notification))
        if shown.count > Self.limit { shown.removeFirst(shown.count - Self.limit) }
    }

    /// The button `key` of notification `id` was pressed: what to do, if it is one of ours and has that button.
    func invoked(id: UInt32, key: String) -> DesktopEffect? {
        guard let notification = shown.last(where: { $0.id == id })?.notification,
            let action = NotificationAction(key: key), notification.actions.contains(action)
        else { return nil }
        switch action {
        case .open: return .openFile(notification.file)
        case .showInFolder: return .showInFolder(notification.file)
        case .retry: return .retryTask(notification.task)
        }
    }

    mutating func closed(id: UInt32) {
        shown.removeAll { $0.id == id }
    }

    mutating func forgetAll() {
        shown = []
    }
}
