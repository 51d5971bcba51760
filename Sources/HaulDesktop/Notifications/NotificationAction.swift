/// A button of a transfer notification: its `actions` key, which `ActionInvoked` names, and its label.
package enum NotificationAction: String, CaseIterable, Sendable {
    /// The downloaded file, with `xdg-open`. Also the notification's `default` action (a click on it).
    case open = "open"
    /// The downloaded file selected in the file manager (`org.freedesktop.FileManager1.ShowItems`).
    case showInFolder = "show-in-folder"
    /// The task's `Retry`.
    case retry = "retry"

    /// The spec's key for a click on the notification itself.
    package static let defaultKey = "default"

    package var label: String {
        switch self {
        case .open: "Open"
        case .showInFolder: "Show in folder"
        case .retry: "Retry"
        }
    }

    /// The action `ActionInvoked` names by `key`; `default` opens.
    package init?(key: String) {
        if key == Self.defaultKey {
            self = .open
        } else {
            self.init(rawValue: key)
        }
    }
}
