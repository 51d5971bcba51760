package import DBusKit

/// What the desktop bridge does about an event. The bridge's model returns effects in order and its owner carries
/// them out in that order; those that wait for an answer report it back as a ``DesktopEvent``.
package enum DesktopEffect: Sendable, Equatable {
    /// A KDE job view call: `requestView` (answered with ``DesktopEvent/viewAnswered(task:server:view:)``), `update`,
    /// `terminate`, or a button's task method.
    case jobView(JobViewBook.Action)
    /// `GetCapabilities` of the notification server, answered with
    /// ``DesktopEvent/notificationCapabilities(query:_:)``.
    case askNotificationCapabilities(query: UInt64)
    /// `Notify`, for a server that can do what the capabilities say; answered with
    /// ``DesktopEvent/notified(_:id:)``.
    case notify(TransferNotification, NotificationCapabilities)
    /// A notification's "Open": the file, with `xdg-open`.
    case openFile(String)
    /// A notification's "Show in folder": the file selected in the file manager
    /// (`org.freedesktop.FileManager1.ShowItems`), or its folder with `xdg-open` when no file manager answers.
    case showInFolder(String)
    /// A notification's "Retry": the task's `Retry`.
    case retryTask(ObjectPath)
    /// `RegisterStatusNotifierItem` with the bridge's connection.
    case registerTrayIcon
    /// The tray icon's `Status` and its icon (``HaulIcon``), announced with `NewIcon` and `NewStatus`.
    case setTrayStatus(visible: Bool)
    /// The tray icon's `ToolTip` and `NewToolTip`.
    case setTrayToolTip(TrayToolTip)
    /// `GetAll` of hauld's Manager, answered with ``DesktopEvent/managerRead(_:)``.
    case readManager
    /// A tray menu item's action: a Manager method, a new `DownloadRateLimit`, opening the downloads folder.
    case trayMenu(TrayMenu.Action)
    /// The menu items' `ItemsPropertiesUpdated`.
    case updateTrayMenu([TrayMenu.Update])
    /// ``DesktopEvent/toolTipDue`` at this instant: a timer of the bridge's own, not a call.
    case armToolTipTimer(at: ContinuousClock.Instant)
}
