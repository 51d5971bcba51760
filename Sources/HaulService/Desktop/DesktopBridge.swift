package import DBusKit
package import Logging

/// Shows Haul in desktop panels: KDE job views with pause/resume/cancel buttons, a StatusNotifierItem tray icon
/// and, when asked for, notifications when transfers end.
///
/// It is a client of the public contract only, on a connection of its own: it follows the tasks through the
/// ObjectManager and `PropertiesChanged` of `org.haul.Haul1.Task`, the indicator through
/// `org.haul.Haul1.ActivityIndicator.Visible`, and acts through `Task.Suspend`/`Resume`/`Cancel` like any other
/// client. (A connection of its own keeps it one: hauld's object server handles one call at a time per
/// connection, so a tray icon exported beside hauld's objects could never call them from a handler without
/// waiting for itself.)
///
/// Everything it hears arrives in one ordered stream and is handled one message at a time. Only the answers to
/// `requestView` come back on their own, whenever Plasma gives them: the job view book keeps each task's state
/// meanwhile, so a slow Plasma holds up nothing else.
package actor DesktopBridge {
    private let connection: DBusConnection
    /// The unique name of hauld's own connection: the bridge follows and calls it before it owns
    /// `org.haul.Haul1`, so that it sees every task from the first.
    private let daemon: String
    private let features: Features
    private let logger: Logger
    private let clock = ContinuousClock()
    private var events: AsyncStream<DBusMessage>?
    private var tasks: [ObjectPath: TaskSnapshot] = [:]
    private var jobViews = JobViewBook()
    private var tray: TrayIcon?
    /// Whether the notification server reads markup in bodies (`GetCapabilities`); nil until it has answered, and
    /// again when another server takes the name.
    private var notificationMarkup: Bool?
    /// The `GetCapabilities` call under way, which every notification meanwhile waits for rather than asking again.
    private var markupQuery: Task<Void, Never>?

    package init(connection: DBusConnection, daemon: String, features: Features, logger: Logger) {
        self.connection = connection
        self.daemon = daemon
        self.features = features
        self.logger = logger
    }

    /// Subscribes to everything the bridge follows. Called before hauld exports its tasks: each of them then
    /// arrives as `InterfacesAdded`, in order with every later change, so nothing that happens during
    /// start-up (a restored task finishing at once, say) can be missed.
    package func subscribe() async throws {
        events = try await connection.messages(matching: rules)
        if features.jobViews {
            // The owner now; a change queued meanwhile names the same owner and changes nothing.
            let owner = try? await connection.nameOwner(KDEJobView.serverName)
            _ = jobViews.serverOwner(owner, tasks: [:], now: clock.now)
        }
        // Asked now, so that the first notification need not wait; a server started on demand is left alone.
        if features.notifications, (try? await connection.nameHasOwner(TransferNotification.busName)) == true {
            Task { await learnNotificationMarkup() }
        }
    }

    /// Follows hauld until `stop()`, cancellation or the loss of the connection. Call `subscribe()` first.
    package func run() async {
        guard let events else { return }
        do {
            let objects: DBusObjectServer? =
                if features.statusNotifier { try await DBusObjectServer(connection: connection) } else { nil }
            await withDiscardingTaskGroup { group in
                if let objects {
                    group.addTask { await objects.run() }
                }
                do {
                    try await startTray(objects)
                    for await message in events { await handle(message) }
                } catch {
                    logger.warning("the desktop bridge stopped: \(error)")
                }
                group.cancelAll()
            }
        } catch {
            logger.warning("the desktop bridge could not start: \(error)")
        }
        await tray?.stop()
        await connection.close()
    }

    /// Ends the job views quietly (the transfers go on when hauld starts again) and closes the connection, which
    /// ends `run()`. Without this, Plasma would say the application closed unexpectedly.
    package func stop() async {
        for action in jobViews.shutdown() { perform(action) }
        // A round trip to the bus: everything sent before it has left when it answers.
        _ = try? await connection.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetId"
            ),
            timeout: .seconds(1)
        )
        await connection.close()
    }

    // MARK: Starting

    private var rules: [MatchRule] {
        var rules = [
            MatchRule(
                kind: .signal, sender: daemon, path: HaulBus.rootPath, interface: StandardInterfaces.objectManager.name
            ),
            MatchRule(
                kind: .signal, sender: daemon, pathNamespace: HaulBus.rootPath,
                interface: StandardInterfaces.properties.name, member: "PropertiesChanged"
            ),
        ]
        if features.jobViews {
            rules.append(Self.ownerChanges(of: KDEJobView.serverName))
            // Only the server's owner can send these (DBusKit follows the name's owner).
            rules.append(MatchRule(kind: .signal, sender: KDEJobView.serverName, interface: KDEJobView.viewInterface))
        }
        if features.statusNotifier {
            rules.append(Self.ownerChanges(of: StatusNotifierItem.watcherName))
        }
        if features.notifications {
            rules.append(Self.ownerChanges(of: TransferNotification.busName))
        }
        return rules
    }

    private static func ownerChanges(of name: String) -> MatchRule {
        var rule = MatchRule.nameOwnerChanged
        rule.arg0 = name
        return rule
    }

    /// The tray icon starts passive, as hauld's indicator starts hidden; its changes arrive in order after that.
    private func startTray(_ objects: DBusObjectServer?) async throws {
        guard let objects else { return }
        let tray = try await TrayIcon(
            objects: objects, visible: false, toolTip: toolTip,
            currentToolTip: { [weak self] in await self?.toolTip ?? TrayToolTip(tasks: []) }, logger: logger
        )
        self.tray = tray
        if try await connection.nameHasOwner(StatusNotifierItem.watcherName) { Task { await tray.register() } }
    }

    // MARK: Events

    private func handle(_ message: DBusMessage) async {
        let body = message.body
        switch (message.interface, message.member) {
        case (StandardInterfaces.objectManager.name?, "InterfacesAdded"?):
            guard let path = body.first?.objectPathValue,
                let properties = body.last?.stringDictionary?[HaulBus.taskInterface]?.stringDictionary
            else { return }
            await taskChanged(path, TaskSnapshot(properties: properties))
        case (StandardInterfaces.objectManager.name?, "InterfacesRemoved"?):
            guard let path = body.first?.objectPathValue,
                body.last?.arrayValue?.contains(.string(HaulBus.taskInterface)) == true
            else { return }
            await taskChanged(path, nil)
        case (StandardInterfaces.properties.name?, "PropertiesChanged"?):
            guard let path = message.path, let changes = body.dropFirst().first?.stringDictionary else { return }
            if body.first?.stringValue == HaulBus.taskInterface, var task = tasks[path] {
                task.apply(changes)
                await taskChanged(path, task)
            } else if body.first?.stringValue == HaulBus.indicatorInterface,
                let visible = changes["Visible"]?.unwrapped.boolValue
            {
                await tray?.setVisible(visible)
            }
        case ("org.freedesktop.DBus"?, "NameOwnerChanged"?):
            guard body.count == 3, let name = body[0].stringValue, let new = body[2].stringValue else { return }
            ownerChanged(name, new: new)
        case (KDEJobView.viewInterface?, let member?):
            guard let view = message.path else { return }
            perform(jobViews.viewRequested(member, view: view))
        default:
            return
        }
    }

    /// A task appeared or changed; nil when it was removed. The notification goes first, so that it is on its
    /// way before a job view ends.
    private func taskChanged(_ path: ObjectPath, _ task: TaskSnapshot?) async {
        let before = tasks[path]
        tasks[path] = task
        if features.notifications, let before, let task,
            let notification = TransferNotification(before: before, after: task)
        {
            if let markup = notificationMarkup {
                send(notify(notification, bodyMarkup: markup))
            } else {
                Task { await notifyOnceCapabilitiesAreKnown(notification) }
            }
        }
        if features.jobViews { perform(jobViews.taskChanged(path, task, now: clock.now)) }
        await tray?.transfersChanged()
    }

    private func ownerChanged(_ name: String, new: String) {
        switch name {
        case KDEJobView.serverName where features.jobViews:
            if !new.isEmpty { logger.debug("\(name) is \(new): showing transfers as KDE jobs") }
            perform(jobViews.serverOwner(new.isEmpty ? nil : new, tasks: tasks, now: clock.now))
        case StatusNotifierItem.watcherName where !new.isEmpty:
            if let tray { Task { await tray.register() } }
        case TransferNotification.busName where features.notifications:
            notificationMarkup = nil
            markupQuery = nil
            if !new.isEmpty { Task { await learnNotificationMarkup() } }
        default:
            return
        }
    }

    private var toolTip: TrayToolTip {
        TrayToolTip(tasks: tasks.values.filter(\.isUnfinished).sorted { $0.id < $1.id })
    }

    // MARK: Job view actions

    private func perform(_ actions: [JobViewBook.Action]) {
        for action in actions { perform(action) }
    }

    /// Nothing here waits: `requestView` is answered while events go on, and the rest wants no answer.
    private func perform(_ action: JobViewBook.Action) {
        switch action {
        case .requestView(let task, let server, let capabilities, let hints):
            Task { await requestView(for: task, from: server, capabilities: capabilities, hints: hints) }
        case .update(let view, let properties):
            send(
                .methodCall(
                    destination: KDEJobView.serverName, path: view, interface: KDEJobView.viewInterface,
                    member: "update", body: [.vardict(properties)]
                )
            )
        case .terminate(let view, let errorCode, let errorMessage):
            send(
                .methodCall(
                    destination: KDEJobView.serverName, path: view, interface: KDEJobView.viewInterface,
                    member: "terminate", body: [.uint32(errorCode), .string(errorMessage), .vardict([:])]
                )
            )
        case .control(let task, let method):
            // In order with the button presses; a refusal (the task has just completed, say) needs no answer.
            send(.methodCall(destination: daemon, path: task, interface: HaulBus.taskInterface, member: method))
        }
    }

    /// A busy Plasma may take its time: the book keeps the task's state meanwhile, and the answer sends it.
    private func requestView(
        for task: ObjectPath, from server: String, capabilities: Int32, hints: [String: DBusValue]
    ) async {
        do {
            let reply = try await connection.call(
                destination: server, path: KDEJobView.serverPath, interface: KDEJobView.serverInterface,
                member: "requestView", [.string(KDEJobView.desktopEntry), .int32(capabilities), .vardict(hints)],
                timeout: .seconds(60)
            )
            guard let view = reply.first?.objectPathValue else {
                throw DBusError.failed("requestView answered \(reply), not an object path")
            }
            perform(jobViews.viewGranted(view, for: task, from: server, tasks[task], now: clock.now))
        } catch {
            logger.warning("no KDE job view for \(task): \(error)")
            jobViews.viewRefused(for: task, from: server)
        }
    }

    // MARK: Notifications

    private func notify(_ notification: TransferNotification, bodyMarkup: Bool) -> DBusMessage {
        .methodCall(
            destination: TransferNotification.busName, path: TransferNotification.path,
            interface: TransferNotification.interface, member: "Notify",
            body: notification.arguments(bodyMarkup: bodyMarkup)
        )
    }

    /// The first notification for a server: its capabilities first (this may start a server activated on demand).
    private func notifyOnceCapabilitiesAreKnown(_ notification: TransferNotification) async {
        if notificationMarkup == nil { await learnNotificationMarkup() }
        // A server that did not answer gets plain text: what the spec asks for when markup is not supported.
        send(notify(notification, bodyMarkup: notificationMarkup ?? false))
    }

    private func learnNotificationMarkup() async {
        if let markupQuery { return await markupQuery.value }
        let query = Task { await askNotificationMarkup() }
        markupQuery = query
        await query.value
        if markupQuery == query { markupQuery = nil }
    }

    private func askNotificationMarkup() async {
        do {
            let reply = try await connection.call(
                destination: TransferNotification.busName, path: TransferNotification.path,
                interface: TransferNotification.interface, member: "GetCapabilities", [], timeout: .seconds(5)
            )
            notificationMarkup =
                reply.first?.arrayValue?.contains(.string(TransferNotification.bodyMarkupCapability)) == true
        } catch {
            logger.warning("the notification server did not list its capabilities: \(error)")
        }
    }

    /// Sends a call that wants no answer (`update`, `terminate` and `Notify` are used so).
    private func send(_ message: DBusMessage) {
        var message = message
        message.noReplyExpected = true
        do {
            try connection.enqueue(message)
        } catch {
            logger.error("could not send \(message.member ?? "a message"): \(error)")
        }
    }
}
