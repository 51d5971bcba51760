package import DBusKit
package import HaulContract

/// A desktop notification for a transfer that has just finished, through the freedesktop Notifications spec:
/// `org.freedesktop.Notifications.Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions,
/// a{sv} hints, i expire_timeout) → u id` on `org.freedesktop.Notifications` at
/// `/org/freedesktop/Notifications`.
///
/// Only real endings are announced: a task seen unfinished and then completed, successfully or not. A cancel is
/// the user's own doing and is not announced (Plasma, likewise, removes cancelled jobs silently). A finished download
/// has the buttons "Open" and "Show in folder" (and opens on a click), a failure "Retry"; the server answers a press
/// with the signal `ActionInvoked(u id, s action_key)`, and says `NotificationClosed(u id, u reason)` when it is gone.
package struct TransferNotification: Sendable, Equatable {
    package static let busName = "org.freedesktop.Notifications"
    package static let path: ObjectPath = "/org/freedesktop/Notifications"
    package static let interface = "org.freedesktop.Notifications"

    /// The task that ended.
    package var task: ObjectPath
    /// Its local file: a download's destination, an upload's source.
    package var file: String

    package var summary: String
    /// Plain text; ``arguments(_:icon:)`` escapes it for servers that read markup.
    package var body: String
    /// The spec's standard category: `transfer.complete` or `transfer.error`.
    package var category: String
    /// A standard icon for it, when Haul's own is not in the icon theme (hauld not installed).
    package var standardIcon: String { category == "transfer.error" ? "dialog-error" : "document-save" }
    /// The buttons, in order.
    package var actions: [NotificationAction]
    /// `app_name`: the application the task came from, else Haul.
    package var applicationName: String

    /// The notification for the task at `task` seen as `before` and now as `after`; nil unless it has just ended
    /// other than by a cancel.
    package init?(task: ObjectPath, before: TaskSnapshot, after: TaskSnapshot) {
        guard before.isUnfinished, after.isCompleted, after.failure != .cancelled else { return nil }
        self.task = task
        file = after.path
        let noun = after.isDownload ? "Download" : "Upload"
        applicationName = KDEJobView.shownName(for: after)
        if after.errorName.isEmpty {
            summary = "\(noun) complete"
            body = after.fileName
            category = "transfer.complete"
            // An upload's file was there before: nothing new to open.
            actions = after.isDownload && file.hasPrefix("/") ? [.open, .showInFolder] : []
        } else {
            summary = "\(noun) failed"
            body = "\(after.fileName): \(after.errorMessage.isEmpty ? after.errorKind : after.errorMessage)"
            category = "transfer.error"
            actions = [.retry]
        }
    }

    /// `Notify`'s arguments, with `icon` (Haul's icon name, or ``standardIcon``), the server's default timeout and
    /// normal urgency. A server with the `body-markup` capability reads the body as the spec's small subset of HTML,
    /// so a file named `a&b.iso` is sent to it escaped, and to any other server as it is. Actions go only to a server
    /// that lists `actions`: key and label in turn, and `default` (a click on the notification) opening the file.
    package func arguments(_ capabilities: NotificationCapabilities, icon: String) -> [DBusValue] {
        var keysAndLabels: [String] = []
        if capabilities.actions {
            if actions.contains(.open) {
                keysAndLabels += [NotificationAction.defaultKey, NotificationAction.open.label]
            }
            for action in actions { keysAndLabels += [action.rawValue, action.label] }
        }
        return [
            .string(applicationName), .uint32(0), .string(icon), .string(summary),
            .string(capabilities.bodyMarkup ? Markup.escaped(body) : body),
            .strings(keysAndLabels), .vardict(["category": .string(category), "urgency": .byte(1)]), .int32(-1),
        ]
    }
}
