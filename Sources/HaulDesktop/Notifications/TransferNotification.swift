package import DBusKit
package import HaulContract

/// A desktop notification for a transfer that has just finished, through the freedesktop Notifications spec:
/// `org.freedesktop.Notifications.Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions,
/// a{sv} hints, i expire_timeout) → u id` on `org.freedesktop.Notifications` at
/// `/org/freedesktop/Notifications`.
///
/// Only real endings are announced: a task seen unfinished and then completed, successfully or not. A cancel is
/// the user's own doing and is not announced (Plasma, likewise, removes cancelled jobs silently).
package struct TransferNotification: Sendable, Equatable {
    package static let busName = "org.freedesktop.Notifications"
    package static let path: ObjectPath = "/org/freedesktop/Notifications"
    package static let interface = "org.freedesktop.Notifications"
    /// What `GetCapabilities` lists when the server reads markup in bodies.
    package static let bodyMarkupCapability = "body-markup"

    package var summary: String
    /// Plain text; ``arguments(bodyMarkup:)`` escapes it for servers that read markup.
    package var body: String
    package var icon: String
    /// The spec's standard category: `transfer.complete` or `transfer.error`.
    package var category: String
    /// `app_name`: the application the task came from, else Haul.
    package var applicationName: String

    package init?(before: TaskSnapshot, after: TaskSnapshot) {
        guard before.isUnfinished, after.isCompleted, after.failure != .cancelled else { return nil }
        let noun = after.isDownload ? "Download" : "Upload"
        applicationName = KDEJobView.shownName(for: after)
        if after.errorName.isEmpty {
            summary = "\(noun) complete"
            body = after.fileName
            icon = "document-save"
            category = "transfer.complete"
        } else {
            summary = "\(noun) failed"
            body = "\(after.fileName): \(after.errorMessage.isEmpty ? after.errorKind : after.errorMessage)"
            icon = "dialog-error"
            category = "transfer.error"
        }
    }

    /// `Notify`'s arguments: no actions, the server's default timeout, normal urgency. A server with the
    /// `body-markup` capability reads the body as the spec's small subset of HTML, so a file named `a&b.iso` is sent
    /// to it escaped, and to any other server as it is.
    package func arguments(bodyMarkup: Bool) -> [DBusValue] {
        [
            .string(applicationName), .uint32(0), .string(icon), .string(summary),
            .string(bodyMarkup ? Markup.escaped(body) : body),
            .strings([]), .vardict(["category": .string(category), "urgency": .byte(1)]), .int32(-1),
        ]
    }
}
