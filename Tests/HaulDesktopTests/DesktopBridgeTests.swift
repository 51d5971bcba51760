import DBusKit
import HaulContract
import HaulDesktop
import HaulTestSupport
import Logging
import Testing

/// The desktop bridge in-process, on a recording bus and a virtual clock: its effects leave in the order its events
/// caused them, answers that take their time hold up nothing else, and its timer runs on the clock it is given.
@Suite(.timeLimit(.minutes(1))) struct DesktopBridgeTests {
    typealias Output = FakeDesktopBus.Output

    static let task = HaulBus.taskPath(1)
    static let plasma = ":1.7"
    static let view: ObjectPath = "/org/kde/notificationmanager/jobs/JobView_1"
    static let hauld = ":1.2"

    /// A started bridge and its bus, running until the body returns; then stopped. `hauldSignals` stands for what
    /// hauld's object server emits (the tests hand most events to `receive` instead).
    static func with(
        _ features: DesktopFeatures, owners: [String: String] = [:],
        hauldSignals: AsyncStream<[DBusMessage]> = AsyncStream { _ in },
        _ body: (DesktopBridge, FakeDesktopBus, ManualClock) async throws -> Void
    ) async throws {
        try await with(features, on: FakeDesktopBus(owners: owners), hauldSignals: hauldSignals, body)
    }

    /// The same on `bus`, and notifications on `notifier` when given: the test can look at what they recorded once
    /// the bridge has stopped.
    static func with(
        _ features: DesktopFeatures, on bus: FakeDesktopBus, notifier: FakeDesktopBus? = nil,
        hauldSignals: AsyncStream<[DBusMessage]> = AsyncStream { _ in },
        _ body: (DesktopBridge, FakeDesktopBus, ManualClock) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        let bridge = DesktopBridge(
            bus: bus, notificationBus: notifier, daemon: hauld, hauldSignals: hauldSignals, features: features,
            clock: clock, logger: Logger(label: "test")
        )
        try await bridge.subscribe()
        let running = Task { await bridge.run() }
        try await body(bridge, bus, clock)
        await bridge.stop()
        await running.value
    }

    /// The tray icon as the indicator shows: Haul's busy icon (its name enough: an empty pixmap) and the status, then
    /// `NewIcon` and `NewStatus`.
    static let turnedBusy: [Output] = [
        .updated(
            path: StatusNotifierItem.path,
            changes: [
                "IconName": .string("haul-busy"), "Status": .string("Active"),
                "IconPixmap": StatusNotifierItem.icon(busy: true, icons: IconLocation())["IconPixmap"] ?? .string(""),
            ]
        ),
        .signal(path: StatusNotifierItem.path, member: "NewIcon", body: []),
        .signal(path: StatusNotifierItem.path, member: "NewStatus", body: [.string("Active")]),
    ]

    /// The next `count` outputs of the bus, in order (waiting for them: no polling).
    static func next(_ count: Int, of bus: FakeDesktopBus) async -> [Output] {
        var iterator = bus.outputs.makeAsyncIterator()
        var outputs: [Output] = []
        while outputs.count < count, let output = await iterator.next() { outputs.append(output) }
        return outputs
    }

    /// The tray icon's start: its menu, then the item exported; then the Manager's settings asked for (answered: no
    /// limit, which changes no item) and, with a watcher, the registration, in either order. Returns what went out.
    static func trayStarted(_ bus: FakeDesktopBus, registers: Bool) async -> [Output] {
        let outputs = await next(registers ? 4 : 3, of: bus)
        bus.answer("GetAll", with: .success([.vardict([ManagerProperty.downloadRateLimit.name: .uint64(0)])]))
        return outputs
    }

    @Test func theTrayIconIsExportedPassiveThenRegisteredAndFollowsTheIndicator() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .off)
        try await Self.with(features, owners: [StatusNotifierItem.watcherName: ":1.3"]) { bridge, bus, _ in
            let first = await Self.trayStarted(bus, registers: true)
            guard case .exported(DBusMenu.path, let menu)? = first.first,
                case .exported(StatusNotifierItem.path, let properties)? = first.dropFirst().first
            else {
                Issue.record("\(first)")
                return
            }
            #expect(menu["Version"] == .uint32(3))
            #expect(properties["Status"] == .string("Passive"))
            #expect(properties["Menu"] == .objectPath(DBusMenu.path))
            #expect(
                first.contains(
                    .called(
                        destination: StatusNotifierItem.watcherName, member: "RegisterStatusNotifierItem",
                        body: [.string(bus.uniqueName)]
                    )))
            #expect(
                first.contains(
                    .called(destination: Self.hauld, member: "GetAll", body: [.string(HaulBus.managerInterface)])
                ))
            bus.answer("RegisterStatusNotifierItem", with: .success([]))
            await bridge.receive(.indicatorChanged(IndicatorProperty.values([.visible: .boolean(true)])))
            #expect(await Self.next(3, of: bus) == Self.turnedBusy)
        }
    }

    /// hauld's signals come from its object server in-process, as it emits them, not from the bus: the bridge
    /// subscribes to none of them there.
    @Test func hauldsSignalsComeInProcess() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .off)
        let (signals, emit) = AsyncStream.makeStream(of: [DBusMessage].self)
        try await Self.with(features, owners: [StatusNotifierItem.watcherName: ":1.3"], hauldSignals: signals) {
            _, bus, _ in
            _ = await Self.trayStarted(bus, registers: true)
            bus.answer("RegisterStatusNotifierItem", with: .success([]))
            #expect(!bus.rules.isEmpty && !bus.rules.contains { $0.sender == Self.hauld })
            let visible = DBusValue.vardict(IndicatorProperty.values([.visible: .boolean(true)]))
            emit.yield([
                .signal(
                    path: HaulBus.managerPath, interface: StandardInterfaces.properties.name,
                    member: "PropertiesChanged", body: [.string(HaulBus.indicatorInterface), visible, .strings([])]
                )
            ])
            #expect(await Self.next(3, of: bus) == Self.turnedBusy)
        }
    }

    /// Virtual time: the tooltip is checked again a second after the last check, when the clock says so, not before.
    @Test func theToolTipWaitsForTheClock() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .off)
        try await Self.with(features, owners: [StatusNotifierItem.watcherName: ":1.3"]) { bridge, bus, clock in
            _ = await Self.trayStarted(bus, registers: true)
            bus.answer("RegisterStatusNotifierItem", with: .success([]))
            await bridge.receive(.taskAdded(Self.task, Tasks.properties(bytes: 1, expected: 100)))
            let first = TrayToolTip(tasks: [Tasks.download(bytes: 1, expected: 100)])
            let enabled = DBusValue.vardict([DBusMenu.Key.enabled: .boolean(true)])
            #expect(
                await Self.next(3, of: bus) == [
                    .updated(path: StatusNotifierItem.path, changes: ["ToolTip": first.value]),
                    .signal(path: StatusNotifierItem.path, member: "NewToolTip", body: []),
                    // Suspend all and Cancel all are enabled now.
                    .signal(
                        path: DBusMenu.path, member: "ItemsPropertiesUpdated",
                        body: [
                            .array(
                                .structure([.int32, .dictionary(key: .string, value: .variant)]),
                                [.structure([.int32(1), enabled]), .structure([.int32(3), enabled])]
                            ),
                            .array(.structure([.int32, .array(.string)]), []),
                        ]
                    ),
                ])

            let progress = TaskProperty.values([.bytesReceived: .uint64(60), .downloadProgress: .double(0.6)])
            await bridge.receive(.taskChanged(Self.task, progress))
            clock.advance(by: .milliseconds(999))
            await bridge.settled()
            #expect(bus.recorded.count == 7, "nothing before the second is over: \(bus.recorded)")
            #expect(clock.deadlines.count == 1)

            clock.advance(by: .milliseconds(1))
            let later = TrayToolTip(tasks: [Tasks.download(bytes: 60, expected: 100)])
            #expect(
                await Self.next(1, of: bus)
                    == [.updated(path: StatusNotifierItem.path, changes: ["ToolTip": later.value])]
            )
        }
    }

    /// A Plasma that takes its time to grant a view holds up nothing: the tray icon's status goes out meanwhile, and
    /// the view, once granted, gets the task as it is then.
    @Test func aSlowRequestViewHoldsUpNothingElse() async throws {
        let features = DesktopFeatures(jobViews: true, statusNotifier: true, notifications: .off)
        try await Self.with(features, owners: [KDEJobView.serverName: Self.plasma]) { bridge, bus, _ in
            _ = await Self.trayStarted(bus, registers: false)
            await bridge.receive(.taskAdded(Self.task, Tasks.properties()))
            // The request is made on its own, so it may come before or after the menu's update (no watcher, so no
            // tooltip).
            let request = Output.called(
                destination: Self.plasma, member: "requestView",
                body: [
                    .string(KDEJobView.desktopEntry), .int32(3), .vardict(JobViewHints.request(for: Tasks.download())),
                ]
            )
            #expect(await Self.next(2, of: bus).contains(request))
            await bridge.receive(.indicatorChanged(IndicatorProperty.values([.visible: .boolean(true)])))
            await bridge.receive(.taskChanged(Self.task, TaskProperty.values([.bytesReceived: .uint64(10)])))
            #expect(await Self.next(3, of: bus) == Self.turnedBusy)
            await bridge.settled()
            #expect(bus.recorded.count == 8, "no update before the view: \(bus.recorded)")

            bus.answer("requestView", with: .success([.objectPath(Self.view)]))
            #expect(
                await Self.next(1, of: bus) == [
                    .sent(
                        destination: KDEJobView.serverName, path: Self.view, member: "update",
                        body: [.vardict(JobViewHints.update(for: Tasks.download(bytes: 10)))]
                    )
                ])
        }
    }

    /// A job view's button reaches hauld as the task's method, from the bridge's own connection.
    @Test func aButtonCallsTheTasksMethod() async throws {
        let features = DesktopFeatures(jobViews: true, statusNotifier: false, notifications: .off)
        try await Self.with(features, owners: [KDEJobView.serverName: Self.plasma]) { bridge, bus, _ in
            await bridge.receive(.taskAdded(Self.task, Tasks.properties()))
            _ = await Self.next(1, of: bus)  // requestView
            bus.answer("requestView", with: .success([.objectPath(Self.view)]))
            _ = await Self.next(1, of: bus)  // update
            await bridge.receive(.jobViewRequest(view: Self.view, signal: "cancelRequested"))
            #expect(
                await Self.next(1, of: bus) == [
                    .sent(destination: Self.hauld, path: Self.task, member: TaskMethod.cancel.rawValue, body: [])
                ])
        }
    }

    /// The tray menu's clicks reach hauld's Manager from the bridge's connection, in order.
    @Test func theTrayMenusClicksCallTheManager() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .off)
        try await Self.with(features) { bridge, bus, _ in
            _ = await Self.trayStarted(bus, registers: false)
            await bridge.receive(.taskAdded(Self.task, Tasks.properties()))
            _ = await Self.next(1, of: bus)  // the menu's update (no watcher, so no tooltip)
            await bridge.receive(.trayMenuEvent(.suspendAll, event: DBusMenu.clickedEvent))
            await bridge.receive(.trayMenuEvent(.limit5MiB, event: DBusMenu.clickedEvent))
            #expect(
                await Self.next(2, of: bus) == [
                    .sent(
                        destination: Self.hauld, path: HaulBus.managerPath, member: ManagerMethod.suspendAll.rawValue,
                        body: []
                    ),
                    .sent(
                        destination: Self.hauld, path: HaulBus.managerPath, member: "Set",
                        body: [
                            .string(HaulBus.managerInterface), .string(ManagerProperty.downloadRateLimit.name),
                            .variant(.uint64(5 * TrayMenu.mebibyte)),
                        ]
                    ),
                ])
        }
    }

    /// Notifications wait for the server's capabilities, in order, and a server reading markup gets them escaped.
    @Test func notificationsWaitForTheCapabilities() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: false, notifications: .always)
        try await Self.with(features) { bridge, bus, _ in
            await bridge.receive(.taskAdded(Self.task, Tasks.properties(file: "/d/a&b.iso")))
            await bridge.receive(.taskChanged(Self.task, Tasks.properties(.completed, file: "/d/a&b.iso")))
            #expect(
                await Self.next(1, of: bus) == [
                    .called(destination: TransferNotification.busName, member: "GetCapabilities", body: [])
                ])
            await bridge.settled()
            #expect(bus.recorded.count == 1, "the notification waits")
            bus.answer("GetCapabilities", with: .success([.strings(["body", "body-markup"])]))
            let notify = await Self.next(1, of: bus)
            guard case .called(TransferNotification.busName, "Notify", let body)? = notify.first else {
                Issue.record("\(notify)")
                return
            }
            #expect(body[4] == .string("a&amp;b.iso"))
            #expect(body[5] == .strings([]), "no actions: the server did not list them")
            // The call is a child of the bridge's run: answered, it ends, and so can the bridge.
            bus.answer("Notify", with: .success([.uint32(1)]))
        }
    }

    /// A notification's buttons: the server's id for it is noted, and `ActionInvoked` with it does what the button
    /// says (the task's `Retry` on hauld; the file manager's `ShowItems` with the file's URI).
    @Test func theButtonsOfANotificationAct() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: false, notifications: .always)
        try await Self.with(features, owners: [TransferNotification.busName: ":1.5"]) { bridge, bus, _ in
            let asked = await Self.next(1, of: bus)
            #expect(asked.first?.description == "called GetCapabilities of \(TransferNotification.busName)")
            bus.answer("GetCapabilities", with: .success([.strings(["actions", "body"])]))
            await bridge.settled()
            let failed = HaulBus.taskPath(2)
            await bridge.receive(.taskAdded(failed, Tasks.properties(id: 2)))
            let failure = Tasks.properties(.completed, error: .network, message: "refused", id: 2)
            await bridge.receive(.taskChanged(failed, failure))
            guard case .called(_, "Notify", let body)? = await Self.next(1, of: bus).first else {
                Issue.record("no Notify")
                return
            }
            #expect(body[5] == .strings(["retry", "Retry"]))
            // The id comes back on its own, whether before or after the press: the press acts once it is known.
            bus.answer("Notify", with: .success([.uint32(41)]))
            await bridge.receive(.notificationAction(id: 41, key: "retry"))
            #expect(
                await Self.next(1, of: bus)
                    == [.sent(destination: Self.hauld, path: failed, member: TaskMethod.retry.rawValue, body: [])])
            await bridge.receive(.taskAdded(Self.task, Tasks.properties(file: "/d/a b.iso")))
            await bridge.receive(.taskChanged(Self.task, Tasks.properties(.completed, file: "/d/a b.iso")))
            _ = await Self.next(1, of: bus)
            await bridge.receive(.notificationAction(id: 42, key: "show-in-folder"))
            bus.answer("Notify", with: .success([.uint32(42)]))
            #expect(
                await Self.next(1, of: bus) == [
                    .called(
                        destination: FileManager1.busName, member: "ShowItems",
                        body: [.strings(["file:///d/a%20b.iso"]), .string("")]
                    )
                ])
            bus.answer("ShowItems", with: .success([]))
        }
    }

    /// Given a connection for notifications (hauld gives one beside a tray icon, which Plasma would not show
    /// notifications of), everything of the notification server goes through it: the capabilities, `Notify` and the
    /// buttons' `ActionInvoked` (which GNOME sends to the notifying connection alone); the task's `Retry` still goes
    /// out on the bridge's own connection, and stopping closes both.
    @Test func notificationsGoThroughTheirOwnConnection() async throws {
        let features = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .always)
        let bus = FakeDesktopBus(owners: [TransferNotification.busName: ":1.5"])
        let notifier = FakeDesktopBus()
        try await Self.with(features, on: bus, notifier: notifier) { bridge, bus, _ in
            _ = await Self.trayStarted(bus, registers: false)
            let asked = await Self.next(1, of: notifier)
            #expect(asked.first?.description == "called GetCapabilities of \(TransferNotification.busName)")
            notifier.answer("GetCapabilities", with: .success([.strings(["actions", "body"])]))
            let failed = HaulBus.taskPath(2)
            await bridge.receive(.taskAdded(failed, Tasks.properties(id: 2)))
            let failure = Tasks.properties(.completed, error: .network, message: "refused", id: 2)
            await bridge.receive(.taskChanged(failed, failure))
            let notified = await Self.next(1, of: notifier)
            #expect(notified.first?.description == "called Notify of \(TransferNotification.busName)")
            notifier.answer("Notify", with: .success([.uint32(7)]))
            var pressed = DBusMessage(kind: .signal, body: [.uint32(7), .string("retry")])
            pressed.path = TransferNotification.path
            pressed.interface = TransferNotification.interface
            pressed.member = "ActionInvoked"
            notifier.deliver(pressed)
            // The tray menu's updates for the task come first.
            var outputs = bus.outputs.makeAsyncIterator()
            var sent: Output?
            while sent == nil, let output = await outputs.next() {
                if case .sent = output { sent = output }
            }
            #expect(sent == .sent(destination: Self.hauld, path: failed, member: TaskMethod.retry.rawValue, body: []))
        }
        #expect(!bus.recorded.contains { $0.description.contains(TransferNotification.busName) })
        #expect(notifier.recorded.last == .closed)
        #expect(bus.recorded.last == .closed)
    }

    /// Stopping ends the open views quietly, makes sure they have left, then closes the connection.
    @Test func stoppingEndsTheViewsBeforeTheConnection() async throws {
        let bus = FakeDesktopBus(owners: [KDEJobView.serverName: Self.plasma])
        let features = DesktopFeatures(jobViews: true, statusNotifier: false, notifications: .off)
        try await Self.with(features, on: bus) { bridge, bus, _ in
            await bridge.receive(.taskAdded(Self.task, Tasks.properties()))
            _ = await Self.next(1, of: bus)  // requestView
            bus.answer("requestView", with: .success([.objectPath(Self.view)]))
            _ = await Self.next(1, of: bus)  // update
        }
        let end = bus.recorded.dropFirst(2).map(\.description)
        #expect(end.prefix(3) == ["sent terminate to \(Self.view)", "flushed", "closed"], "\(end)")
    }
}
