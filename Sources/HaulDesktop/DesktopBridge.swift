package import DBusKit
import HaulContract
package import Logging
package import ServiceKit

/// Shows Haul in desktop panels: KDE job views with pause/resume/cancel buttons, a StatusNotifierItem tray icon
/// and notifications with buttons when transfers end.
///
/// It is a client of the public contract only, on a connection of its own (``DesktopBus``): it follows the tasks
/// through the ObjectManager's signals (but for those hauld restores at start, handed over as `InterfacesAdded` would
/// show them: ``tasksRestored(_:)``) and `PropertiesChanged` of `org.haul.Haul1.Task`, the indicator through
/// `org.haul.Haul1.ActivityIndicator.Visible`, and acts through `Task.Suspend`/`Resume`/`Cancel`/`Retry` like any
/// other client (and, from the tray icon's menu, the Manager's `SuspendAll`/`ResumeAll`/`CancelAll` and
/// `DownloadRateLimit`). hauld's signals come to it in-process, as hauld emits them (`hauldSignals`, from
/// `DBusObjectServer.emittedSignals()`), not back through the bus: a `*All` of ten thousand tasks sends ten thousand
/// `PropertiesChanged`, and taking each back from the bus, checked and decoded, made the `*All` a fifth slower.
///
/// It has the shape of hauld's services: each event (``DesktopEvent``) changes the state (``DesktopModel``) at once
/// and queues its effects in an ordered ``Outbox``, with no `await` in between; `run()` carries the outbox out in order.
/// Only the answers to calls (`requestView`, the notification server's capabilities and ids) come back on their own,
/// as events, whenever the desktop gives them: a slow Plasma holds up nothing else. Those calls run as children of
/// `run()`, so `stop()` ends them too. Time comes from the injected clock.
///
/// Notifications may go through a second connection (`notificationBus`): Plasma 5.27 shows no popup for a
/// notification sent by the connection that owns a tray icon.
package actor DesktopBridge {
    private let bus: any DesktopBus
    /// Where notifications go and their buttons' signals come from: `bus`, or a connection of their own.
    private let notifier: any DesktopBus
    /// The unique name of hauld's own connection, where the bridge calls hauld (before it owns `org.haul.Haul1` too).
    private let daemon: String
    private let clock: any ServiceClock
    private let icons: IconLocation
    private let logger: Logger
    private var model: DesktopModel
    /// hauld's signals, as its object server emits them.
    private let hauldSignals: AsyncStream<[DBusMessage]>
    /// The desktop's signals the bridge subscribed to on `bus`.
    private var events: AsyncStream<DBusMessage>?
    /// The notification server's signals, when they come on a connection of their own.
    private var notifierEvents: AsyncStream<DBusMessage>?
    private var isRunning = false
    private var toolTipTimer: Task<Void, Never>?
    private let outbox = Outbox<DesktopEffect>()
    private let hasOwnNotifier: Bool

    /// `icons`: where the desktop finds Haul's icons (``IconLocation/locate(environment:)`` for hauld's own).
    /// `notificationBus`: a connection for notifications alone; without one they go through `bus`. `daemon` is the
    /// unique name the bridge calls hauld at, and `hauldSignals` what hauld's object server emits from before it
    /// exports anything, so that each new task arrives as `InterfacesAdded`, in order with every later change.
    package init(
        bus: any DesktopBus, notificationBus: (any DesktopBus)? = nil, daemon: String,
        hauldSignals: AsyncStream<[DBusMessage]>, features: DesktopFeatures, icons: IconLocation = IconLocation(),
        clock: any ServiceClock, logger: Logger
    ) {
        self.bus = bus
        self.hauldSignals = hauldSignals
        notifier = notificationBus ?? bus
        hasOwnNotifier = notificationBus != nil
        self.daemon = daemon
        self.clock = clock
        self.icons = icons
        self.logger = logger
        model = DesktopModel(features: features)
    }

    /// Subscribes to the desktop's signals the bridge follows and notes which panels are there. The tasks hauld
    /// restores come by `tasksRestored(_:)`, before any change of theirs.
    package func subscribe() async throws {
        let notificationRules = model.features.notifications != .off ? [Self.notificationSignals] : []
        if hasOwnNotifier, !notificationRules.isEmpty {
            events = try await bus.messages(matching: rules)
            notifierEvents = try await notifier.messages(matching: notificationRules)
        } else {
            events = try await bus.messages(matching: rules + notificationRules)
        }
        let features = model.features
        // The owners now; a change queued meanwhile names the same owner and changes nothing.
        let jobViewServer = features.jobViews ? await bus.owner(of: KDEJobView.serverName) : nil
        let notificationServer =
            features.notifications != .off ? await bus.owner(of: TransferNotification.busName) : nil
        let trayWatcher = features.statusNotifier ? await bus.owner(of: StatusNotifierItem.watcherName) : nil
        receive(
            .started(
                jobViewServer: jobViewServer, notificationServer: notificationServer != nil,
                trayWatcher: trayWatcher != nil
            )
        )
    }

    /// Follows hauld until `stop()`, cancellation or the loss of the connection. Call `subscribe()` first.
    package func run() async {
        guard let events else { return }
        isRunning = true
        await withDiscardingTaskGroup { serving in
            serving.addTask { [bus] in await bus.serve() }
            // Ends with the others below: hauld's signals never end on their own.
            serving.addTask { [hauldSignals] in await self.follow(hauldSignals) }
            // Before any effect is carried out: registering the tray icon needs it exported, and its menu first.
            if model.features.statusNotifier {
                await exportTrayMenu()
                await exportTrayIcon()
            }
            await withDiscardingTaskGroup { following in
                following.addTask {
                    await self.carryOut()
                    // Nothing is left to notify: the notification server's signals end with the connection.
                    if self.hasOwnNotifier { await self.notifier.close() }
                }
                if let notifierEvents {
                    following.addTask {
                        for await message in notifierEvents {
                            if let event = DesktopEvent(message) { await self.receive(event) }
                        }
                    }
                }
                for await message in events {
                    if let event = DesktopEvent(message) { receive(event) }
                }
                // What is queued still goes out (or fails, the connection gone); then the carrying out ends.
                outbox.finish()
            }
            toolTipTimer?.cancel()
            serving.cancelAll()
        }
        await bus.close()
    }

    /// Ends the job views quietly (the transfers go on when hauld starts again) and closes the connection, which
    /// ends `run()`. Without this, Plasma would say the application closed unexpectedly.
    package func stop() async {
        receive(.stopping)
        if isRunning { await settled() }
        await bus.flush()
        await bus.close()
        if !isRunning, hasOwnNotifier { await notifier.close() }
    }

    /// Receives hauld's signals on the actor, with no hop per signal: a `*All` of ten thousand tasks sends twenty
    /// thousand, which come a batch of the `*All` at a time.
    private func follow(_ signals: AsyncStream<[DBusMessage]>) async {
        for await messages in signals {
            for message in messages {
                if let event = DesktopEvent(message) { receive(event) }
            }
        }
    }

    /// Tasks hauld restored at start, with every property. hauld exports them before it owns its name, without
    /// `InterfacesAdded` (no client following `org.haul.Haul1` could hear it), and hands them here instead, before
    /// any of their changes goes out: those arrive as hauld emits them, as for every other task.
    package func tasksRestored(_ tasks: [(path: ObjectPath, properties: [String: DBusValue])]) {
        for task in tasks { receive(.taskAdded(task.path, task.properties)) }
    }

    /// Applies an event and queues its effects, in order, without suspending.
    package func receive(_ event: DesktopEvent) {
        if case .nameOwnerChanged(KDEJobView.serverName, let owner) = event, !owner.isEmpty, model.features.jobViews {
            logger.debug("\(KDEJobView.serverName) is \(owner): showing transfers as KDE jobs")
        }
        for effect in model.handle(event, now: clock.now) { outbox.send(effect) }
    }

    /// Returns once every effect queued so far has been carried out (at once when `run()` has ended).
    package func settled() async {
        await outbox.settled()
    }

    // MARK: Starting

    private var rules: [MatchRule] {
        var rules: [MatchRule] = []
        if model.features.jobViews {
            rules.append(Self.ownerChanges(of: KDEJobView.serverName))
            // Only the server's owner can send these (DBusKit follows the name's owner).
            rules.append(MatchRule(kind: .signal, sender: KDEJobView.serverName, interface: KDEJobView.viewInterface))
        }
        if model.features.statusNotifier {
            rules.append(Self.ownerChanges(of: StatusNotifierItem.watcherName))
        }
        if model.features.notifications != .off {
            rules.append(Self.ownerChanges(of: TransferNotification.busName))
        }
        return rules
    }

    /// `ActionInvoked` and `NotificationClosed`, from the server's owner only, on the connection that notifies (GNOME
    /// sends them to the notification's sender alone).
    private static var notificationSignals: MatchRule {
        MatchRule(kind: .signal, sender: TransferNotification.busName, interface: TransferNotification.interface)
    }

    private static func ownerChanges(of name: String) -> MatchRule {
        var rule = MatchRule.nameOwnerChanged
        rule.arg0 = name
        return rule
    }

    /// The tray icon starts passive, as hauld's indicator starts hidden; its changes arrive in order after that.
    private func exportTrayIcon() async {
        let interface = StatusNotifierItem.exportedInterface(
            visible: IndicatorSnapshot().visible, toolTip: model.trayToolTip, icons: icons
        )
        do {
            try await bus.export(interface, at: StatusNotifierItem.path)
            logger.info("tray icon at \(bus.uniqueName) \(StatusNotifierItem.path)")
        } catch {
            logger.warning("no tray icon: \(error)")
        }
    }

    /// The menu answers from the model as it is when a host asks.
    private func exportTrayMenu() async {
        let interface = TrayMenuInterface.exported(
            menu: { [weak self] in await self?.model.trayMenu ?? TrayMenu() },
            event: { [weak self] item, event in await self?.receive(.trayMenuEvent(item, event: event)) }
        )
        do {
            try await bus.export(interface, at: DBusMenu.path)
        } catch {
            logger.warning("no tray menu: \(error)")
        }
    }

    private func armToolTipTimer(at deadline: ContinuousClock.Instant) {
        toolTipTimer?.cancel()
        toolTipTimer = clock.timer(at: deadline) { [weak self] in await self?.receive(.toolTipDue) }
    }

    // MARK: Carrying out

    /// Carries out the outbox in order until it ends.
    private func carryOut() async {
        await outbox.run { effect, calls in await perform(effect, calls: &calls) }
    }

    /// Nothing here waits for an answer: a call that has one runs in `calls` and reports its answer as an event.
    private func perform(_ effect: DesktopEffect, calls: inout DiscardingTaskGroup) async {
        do {
            switch effect {
            case .jobView(let action):
                try perform(action, calls: &calls)
            case .askNotificationCapabilities(let query):
                calls.addTask {
                    await self.receive(.notificationCapabilities(query: query, await self.notificationCapabilities()))
                }
            case .notify(let notification, let capabilities):
                calls.addTask {
                    await self.receive(.notified(notification, id: await self.notify(notification, capabilities)))
                }
            case .openFile(let file):
                XDGOpen.open(file, logger: logger)
            case .showInFolder(let file):
                calls.addTask { await self.showInFolder(file) }
            case .retryTask(let task):
                // hauld's answer needs none: the task's changes come back as `PropertiesChanged`.
                try bus.send(
                    .methodCall(
                        destination: daemon, path: task, interface: HaulBus.taskInterface,
                        member: TaskMethod.retry.rawValue
                    )
                )
            case .registerTrayIcon:
                calls.addTask { await self.registerTrayIcon() }
            case .setTrayStatus(let visible):
                let status = StatusNotifierItem.status(visible: visible)
                try await bus.updateProperties(
                    StatusNotifierItem.icon(busy: visible, icons: icons).merging(["Status": .string(status)]) { $1 },
                    interface: StatusNotifierItem.interface, at: StatusNotifierItem.path
                )
                try await bus.emitSignal(
                    path: StatusNotifierItem.path, interface: StatusNotifierItem.interface, member: "NewIcon", []
                )
                try await bus.emitSignal(
                    path: StatusNotifierItem.path, interface: StatusNotifierItem.interface, member: "NewStatus",
                    [.string(status)]
                )
            case .setTrayToolTip(let toolTip):
                try await bus.updateProperties(
                    ["ToolTip": toolTip.value], interface: StatusNotifierItem.interface, at: StatusNotifierItem.path
                )
                try await bus.emitSignal(
                    path: StatusNotifierItem.path, interface: StatusNotifierItem.interface, member: "NewToolTip", []
                )
            case .readManager:
                calls.addTask { await self.receive(.managerRead(await self.managerProperties())) }
            case .trayMenu(let action):
                try perform(action)
            case .updateTrayMenu(let updates):
                try await bus.emitSignal(
                    path: DBusMenu.path, interface: DBusMenu.interface, member: "ItemsPropertiesUpdated",
                    TrayMenuInterface.itemsPropertiesUpdated(updates)
                )
            case .armToolTipTimer(let deadline):
                armToolTipTimer(at: deadline)
            }
        } catch {
            logger.error("the desktop bridge could not carry out \(effect): \(error)")
        }
    }

    private nonisolated func perform(_ action: JobViewBook.Action, calls: inout DiscardingTaskGroup) throws {
        switch action {
        case .requestView(let task, let server, let desktopEntry, let capabilities, let hints):
            calls.addTask {
                await self.requestView(
                    for: task, from: server, desktopEntry: desktopEntry, capabilities: capabilities, hints: hints
                )
            }
        case .update(let view, let properties):
            try bus.send(
                .methodCall(
                    destination: KDEJobView.serverName, path: view, interface: KDEJobView.viewInterface,
                    member: "update", body: [.vardict(properties)]
                )
            )
        case .terminate(let view, let errorCode, let errorMessage):
            try bus.send(
                .methodCall(
                    destination: KDEJobView.serverName, path: view, interface: KDEJobView.viewInterface,
                    member: "terminate", body: [.uint32(errorCode), .string(errorMessage), .vardict([:])]
                )
            )
        case .control(let task, let method):
            // In order with the button presses; a refusal (the task has just completed, say) needs no answer.
            try bus.send(
                .methodCall(destination: daemon, path: task, interface: HaulBus.taskInterface, member: method.rawValue)
            )
        }
    }

    /// In order with the clicks; hauld's answers need none (the changes come back as `PropertiesChanged`).
    private nonisolated func perform(_ action: TrayMenu.Action) throws {
        switch action {
        case .manager(let method):
            try bus.send(
                .methodCall(
                    destination: daemon, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                    member: method.rawValue
                )
            )
        case .setDownloadRateLimit(let limit):
            try bus.send(
                .methodCall(
                    destination: daemon, path: HaulBus.managerPath, interface: StandardInterfaces.properties.name,
                    member: "Set",
                    body: [
                        .string(HaulBus.managerInterface), .string(ManagerProperty.downloadRateLimit.name),
                        .variant(.uint64(limit)),
                    ]
                )
            )
        case .openDownloadsFolder:
            DownloadsFolder.open(logger: logger)
        }
    }

    /// The Manager's properties, for the tray menu's download limit; nil when hauld did not answer.
    private nonisolated func managerProperties() async -> [String: DBusValue]? {
        do {
            let reply = try await bus.call(
                .methodCall(
                    destination: daemon, path: HaulBus.managerPath, interface: StandardInterfaces.properties.name,
                    member: "GetAll", body: [.string(HaulBus.managerInterface)]
                ),
                timeout: .seconds(5)
            )
            return reply.first?.stringDictionary
        } catch {
            logger.warning("could not read the Manager's settings for the tray menu: \(error)")
            return nil
        }
    }

    /// A busy Plasma may take its time: the model keeps the task's state meanwhile, and the answer sends it.
    private nonisolated func requestView(
        for task: ObjectPath, from server: String, desktopEntry: String, capabilities: Int32,
        hints: [String: DBusValue]
    ) async {
        var view: ObjectPath?
        do {
            let reply = try await bus.call(
                .methodCall(
                    destination: server, path: KDEJobView.serverPath, interface: KDEJobView.serverInterface,
                    member: "requestView",
                    body: [.string(desktopEntry), .int32(capabilities), .vardict(hints)]
                ),
                timeout: .seconds(60)
            )
            guard let granted = reply.first?.objectPathValue else {
                throw DBusError.failed("requestView answered \(reply), not an object path")
            }
            view = granted
        } catch {
            logger.warning("no KDE job view for \(task): \(error)")
        }
        await receive(.viewAnswered(task: task, server: server, view: view))
    }

    /// What the notification server can do; nil when it did not say.
    private nonisolated func notificationCapabilities() async -> NotificationCapabilities? {
        do {
            let reply = try await notifier.call(
                .methodCall(
                    destination: TransferNotification.busName, path: TransferNotification.path,
                    interface: TransferNotification.interface, member: "GetCapabilities"
                ),
                timeout: .seconds(5)
            )
            return NotificationCapabilities(reply.first?.arrayValue?.compactMap(\.stringValue) ?? [])
        } catch let error as DBusError where error.name == Self.serviceUnknown {
            logger.debug("no notification server on the bus")
            return nil
        } catch {
            logger.warning("the notification server did not list its capabilities: \(error)")
            return nil
        }
    }

    /// What the bus answers for a name that no one owns and no service file starts.
    private static var serviceUnknown: String { "org.freedesktop.DBus.Error.ServiceUnknown" }

    /// Shows `notification`; returns the server's id for it, nil when it failed.
    private nonisolated func notify(
        _ notification: TransferNotification, _ capabilities: NotificationCapabilities
    ) async -> UInt32? {
        do {
            let reply = try await notifier.call(
                .methodCall(
                    destination: TransferNotification.busName, path: TransferNotification.path,
                    interface: TransferNotification.interface, member: "Notify",
                    body: notification.arguments(
                        capabilities, icon: icons.notificationIcon(.idle) ?? notification.standardIcon
                    )
                ),
                timeout: .seconds(10)
            )
            return reply.first?.uint32Value
        } catch {
            logger.warning("could not show a notification: \(error)")
            return nil
        }
    }

    /// "Show in folder": the file manager selects the file; with none on the bus (and none it can start), or one
    /// that fails, the folder opens with `xdg-open` instead.
    private nonisolated func showInFolder(_ file: String) async {
        do {
            _ = try await bus.call(FileManager1.showItem(file), timeout: .seconds(20))
        } catch {
            logger.debug("no file manager showed \(file) (\(error)): opening its folder")
            XDGOpen.open(FileManager1.folder(of: file), logger: logger)
        }
    }

    /// `RegisterStatusNotifierItem` with this connection's unique name, as KDE's own items do.
    private nonisolated func registerTrayIcon() async {
        do {
            _ = try await bus.call(
                .methodCall(
                    destination: StatusNotifierItem.watcherName, path: StatusNotifierItem.watcherPath,
                    interface: StatusNotifierItem.watcherInterface, member: "RegisterStatusNotifierItem",
                    body: [.string(bus.uniqueName)]
                ),
                timeout: .seconds(5)
            )
            logger.debug("registered the tray icon with \(StatusNotifierItem.watcherName)")
        } catch {
            logger.warning("could not register the tray icon: \(error)")
        }
    }
}
