/// What the notification server said it can do (`GetCapabilities`), of what the bridge uses.
package struct NotificationCapabilities: Sendable, Equatable {
    /// `body-markup`: bodies are read as the spec's markup, so text in them is escaped.
    package var bodyMarkup: Bool
    /// `actions`: buttons are shown. Without it none are sent: a server may otherwise make a notification that has
    /// actions a dialog that waits for an answer (notify-osd did).
    package var actions: Bool

    /// Neither: what a server that did not answer is sent (the spec's rule: plain text).
    package static let none = NotificationCapabilities(bodyMarkup: false, actions: false)

    package init(bodyMarkup: Bool, actions: Bool) {
        self.bodyMarkup = bodyMarkup
        self.actions = actions
    }

    /// From `GetCapabilities`' list.
    package init(_ listed: [String]) {
        bodyMarkup = listed.contains("body-markup")
        actions = listed.contains("actions")
    }
}
