package import DBusKit
package import HaulContract

/// The desktop bridge's state as a pure state machine: events (``DesktopEvent``) carry the current instant and
/// return the effects to carry out, in order (``DesktopEffect``). It knows hauld's tasks only as the contract shows
/// them (``TaskSnapshot``), and holds the KDE job views (``JobViewBook``), the notifications waiting for the server's
/// capabilities (``NotificationQueue``) and those on screen with buttons (``NotificationBook``), the tray icon's
/// tooltip schedule (``TrayToolTipSchedule``) and its menu (``TrayMenu``), which also follows the Manager's settings
/// (``ManagerSnapshot``).
package struct DesktopModel: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package let features: DesktopFeatures
    package private(set) var tasks: [ObjectPath: TaskSnapshot] = [:]
    /// What the tray menu needs of `tasks`, kept as they change.
    private var counts = TaskStateCounts()
    private var jobViews = JobViewBook()
    private var notifications = NotificationQueue()
    private var shownNotifications = NotificationBook()
    private var toolTip = TrayToolTipSchedule(shown: TrayToolTip(tasks: [TaskSnapshot]()))
    private var manager = ManagerSnapshot()
    /// The Manager's properties heard of in `PropertiesChanged`: newer than a `GetAll` answer that arrives later.
    private var managerSignalled: Set<String> = []
    /// The tray icon's menu as shown now.
    package private(set) var trayMenu = TrayMenu()

    package init(features: DesktopFeatures) {
        self.features = features
    }

    /// The tray icon's tooltip as shown now.
    package var trayToolTip: TrayToolTip { toolTip.shown }

    package mutating func handle(_ event: DesktopEvent, now: Instant) -> [DesktopEffect] {
        switch event {
        case .started(let jobViewServer, let notificationServer, let trayWatcher):
            var effects: [DesktopEffect] = []
            if features.jobViews {
                effects += jobViewActions(jobViews.serverOwner(jobViewServer, tasks: tasks, now: now))
            }
            if features.notifications != .off, notificationServer {
                effects += notifications.serverChanged(present: true)
            }
            if features.statusNotifier {
                effects.append(.readManager)
                if trayWatcher { effects += trayWatcherChanged(present: true, now: now) }
            }
            return effects
        case .taskAdded(let path, let properties):
            return taskChanged(path, TaskSnapshot(properties: properties), now: now)
        case .taskChanged(let path, let changes):
            guard var task = tasks[path] else { return [] }
            task.apply(changes)
            return taskChanged(path, task, now: now)
        case .taskRemoved(let path):
            return taskChanged(path, nil, now: now)
        case .indicatorChanged(let changes):
            guard features.statusNotifier, let visible = IndicatorProperty.visible.value(in: changes)?.boolValue else {
                return []
            }
            return [.setTrayStatus(visible: visible)]
        case .managerChanged(let changes):
            managerSignalled.formUnion(changes.keys)
            manager.apply(changes)
            return trayMenuChanged()
        case .managerRead(let properties?):
            manager.apply(properties.filter { !managerSignalled.contains($0.key) })
            return trayMenuChanged()
        case .managerRead(nil):
            return []
        case .trayMenuEvent(let item, let event):
            guard features.statusNotifier, event == DBusMenu.clickedEvent,
                let action = trayMenu.action(clicking: item)
            else { return [] }
            return [.trayMenu(action)]
        case .nameOwnerChanged(let name, let owner):
            return ownerChanged(name, owner: owner, now: now)
        case .jobViewRequest(let view, let signal):
            return jobViewActions(jobViews.viewRequested(signal, view: view))
        case .viewAnswered(let task, let server, let view?):
            return jobViewActions(jobViews.viewGranted(view, for: task, from: server, tasks[task], now: now))
        case .viewAnswered(let task, let server, nil):
            jobViews.viewRefused(for: task, from: server)
            return []
        case .notificationCapabilities(let query, let capabilities):
            return notifications.answered(query: query, capabilities: capabilities)
        case .notified(let notification, let id?):
            return shownNotifications.shown(notification, id: id)
        case .notified(_, nil):
            return []
        case .notificationAction(let id, let key):
            return shownNotifications.pressed(id: id, key: key).map { [$0] } ?? []
        case .notificationClosed(let id):
            shownNotifications.closed(id: id)
            return []
        case .toolTipDue:
            return toolTip.timerFired(now: now, current: currentToolTip)
        case .stopping:
            return jobViewActions(jobViews.shutdown())
        }
    }

    /// A task appeared or changed; nil when it was removed. The notification goes first, while the job view book
    /// still knows whether the task has a view.
    private mutating func taskChanged(_ path: ObjectPath, _ task: TaskSnapshot?, now: Instant) -> [DesktopEffect] {
        let before = tasks[path]
        tasks[path] = task
        if let before { counts.remove(before) }
        if let task { counts.add(task) }
        var effects: [DesktopEffect] = []
        if let before, let task, let notification = TransferNotification(task: path, before: before, after: task),
            features.notifications == .always
                || features.notifications == .unlessShownAsJob && !jobViews.isShowing(path)
        {
            effects += notifications.add(notification)
        }
        if features.jobViews { effects += jobViewActions(jobViews.taskChanged(path, task, now: now)) }
        if features.statusNotifier {
            effects += toolTip.transfersChanged(now: now, current: currentToolTip)
            effects += trayMenuChanged()
        }
        return effects
    }

    /// The menu for the tasks and limit now, and the items that changed, if any.
    private mutating func trayMenuChanged() -> [DesktopEffect] {
        guard features.statusNotifier else { return [] }
        let menu = TrayMenu(counts: counts, downloadRateLimit: manager.downloadRateLimit)
        let updates = menu.updates(since: trayMenu)
        trayMenu = menu
        return updates.isEmpty ? [] : [.updateTrayMenu(updates)]
    }

    private mutating func ownerChanged(_ name: String, owner: String, now: Instant) -> [DesktopEffect] {
        switch name {
        case KDEJobView.serverName where features.jobViews:
            return jobViewActions(jobViews.serverOwner(owner.isEmpty ? nil : owner, tasks: tasks, now: now))
        case StatusNotifierItem.watcherName where features.statusNotifier:
            return trayWatcherChanged(present: !owner.isEmpty, now: now)
        case TransferNotification.busName where features.notifications != .off:
            shownNotifications.forgetAll()  // the ids were the old server's
            return notifications.serverChanged(present: !owner.isEmpty)
        default:
            return []
        }
    }

    /// A watcher came or went: one that came gets the icon registered, its tooltip brought up to date first.
    private mutating func trayWatcherChanged(present: Bool, now: Instant) -> [DesktopEffect] {
        let toolTip = toolTip.watcherChanged(present: present, now: now, current: currentToolTip)
        return present ? toolTip + [.registerTrayIcon] : toolTip
    }

    private func currentToolTip() -> TrayToolTip {
        TrayToolTip(tasks: tasks.values)
    }

    private func jobViewActions(_ actions: [JobViewBook.Action]) -> [DesktopEffect] {
        actions.map(DesktopEffect.jobView)
    }
}
