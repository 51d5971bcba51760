package import DBusKit
import HaulContract

/// What the desktop bridge hears, in the order it hears it: hauld's tasks and indicator, the desktop's panels coming
/// and going and a job view's buttons, and the answers to the bridge's own calls and timer.
package enum DesktopEvent: Sendable, Equatable {
    /// The bridge starts: who owns the job view server's name, and whether a notification server and a tray watcher
    /// are on the bus.
    case started(jobViewServer: String?, notificationServer: Bool, trayWatcher: Bool)
    /// A task object appeared (`InterfacesAdded`), with every property.
    case taskAdded(ObjectPath, [String: DBusValue])
    /// A task's `PropertiesChanged`.
    case taskChanged(ObjectPath, [String: DBusValue])
    /// A task object went away (`InterfacesRemoved`).
    case taskRemoved(ObjectPath)
    /// The indicator's `PropertiesChanged`.
    case indicatorChanged([String: DBusValue])
    /// The Manager's `PropertiesChanged`.
    case managerChanged([String: DBusValue])
    /// The answer to ``DesktopEffect/readManager``: the Manager's properties, or nil when hauld did not answer.
    case managerRead([String: DBusValue]?)
    /// A host sent `event` (`clicked`, `hovered`, …) for an item of the tray icon's menu.
    case trayMenuEvent(TrayMenu.Item, event: String)
    /// `name` has a new owner; an empty owner when it has none.
    case nameOwnerChanged(name: String, owner: String)
    /// A job view's signal (`suspendRequested`, …), sent by the job view server's owner.
    case jobViewRequest(view: ObjectPath, signal: String)
    /// `server` answered the `requestView` for `task` with a view, or refused it (nil).
    case viewAnswered(task: ObjectPath, server: String, view: ObjectPath?)
    /// The notification server answered the capabilities query `query`, or did not (nil).
    case notificationCapabilities(query: UInt64, NotificationCapabilities?)
    /// The server showed `notification` as `id`, or did not (nil).
    case notified(TransferNotification, id: UInt32?)
    /// The button `key` of the server's notification `id` was pressed (`ActionInvoked`).
    case notificationAction(id: UInt32, key: String)
    /// The server's notification `id` is gone (`NotificationClosed`).
    case notificationClosed(id: UInt32)
    /// The tray icon's tooltip is due to be checked again.
    case toolTipDue
    /// hauld is stopping.
    case stopping

    /// The event a message of the bridge's subscriptions stands for; nil for one that says nothing it follows.
    package init?(_ message: DBusMessage) {
        let body = message.body
        switch (message.interface, message.member) {
        case (StandardInterfaces.objectManager.name?, "InterfacesAdded"?):
            guard let path = body.first?.objectPathValue,
                let properties = body.last?.stringDictionary?[HaulBus.taskInterface]?.stringDictionary
            else { return nil }
            self = .taskAdded(path, properties)
        case (StandardInterfaces.objectManager.name?, "InterfacesRemoved"?):
            guard let path = body.first?.objectPathValue,
                body.last?.arrayValue?.contains(.string(HaulBus.taskInterface)) == true
            else { return nil }
            self = .taskRemoved(path)
        case (StandardInterfaces.properties.name?, "PropertiesChanged"?):
            guard let path = message.path, let changes = body.dropFirst().first?.stringDictionary else { return nil }
            switch body.first?.stringValue {
            case HaulBus.taskInterface?: self = .taskChanged(path, changes)
            case HaulBus.indicatorInterface?: self = .indicatorChanged(changes)
            case HaulBus.managerInterface?: self = .managerChanged(changes)
            default: return nil
            }
        case ("org.freedesktop.DBus"?, "NameOwnerChanged"?):
            guard body.count == 3, let name = body[0].stringValue, let owner = body[2].stringValue else { return nil }
            self = .nameOwnerChanged(name: name, owner: owner)
        case (TransferNotification.interface?, "ActionInvoked"?):
            guard body.count == 2, let id = body[0].uint32Value, let key = body[1].stringValue else { return nil }
            self = .notificationAction(id: id, key: key)
        case (TransferNotification.interface?, "NotificationClosed"?):
            guard body.count == 2, let id = body[0].uint32Value else { return nil }
            self = .notificationClosed(id: id)
        case (KDEJobView.viewInterface?, let member?):
            guard let view = message.path else { return nil }
            self = .jobViewRequest(view: view, signal: member)
        default:
            return nil
        }
    }
}
