import DBusKit
import HaulContract
import HaulDesktop
import HaulTestSupport
import Testing

/// The desktop bridge's state machine, in virtual time: events in, effects out, in order.
@Suite(.timeLimit(.minutes(2))) struct DesktopModelTests {
    static let task = HaulBus.taskPath(1)
    static let plasma = ":1.7"
    static let view: ObjectPath = "/org/kde/notificationmanager/jobs/JobView_1"
    static let start = ContinuousClock.now

    static let notificationsOnly = DesktopFeatures(jobViews: false, statusNotifier: false, notifications: .always)
    static let trayOnly = DesktopFeatures(jobViews: false, statusNotifier: true, notifications: .off)
    static let jobViewsOnly = DesktopFeatures(jobViews: true, statusNotifier: false, notifications: .off)
    static let visible = IndicatorProperty.values([.visible: .boolean(true)])
    static let everything = NotificationCapabilities(bodyMarkup: true, actions: true)

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A model started with no panel on the bus, or only a StatusNotifierWatcher.
    static func model(_ features: DesktopFeatures, trayWatcher: Bool = false) -> DesktopModel {
        var model = DesktopModel(features: features)
        _ = model.handle(
            .started(jobViewServer: nil, notificationServer: false, trayWatcher: trayWatcher), now: at(0)
        )
        return model
    }

    /// The changes of a download's progress to `bytes` of 100.
    static func progress(_ bytes: UInt64) -> [String: DBusValue] {
        TaskProperty.values([.bytesReceived: .uint64(bytes), .downloadProgress: .double(Double(bytes) / 100)])
    }

    /// The notification of a running download that ended as `after`.
    static func notification(_ after: TaskSnapshot) throws -> TransferNotification {
        try #require(
            TransferNotification(
                task: HaulBus.taskPath(after.id), before: Tasks.download(file: after.path, id: after.id), after: after
            ))
    }

    @Test func whatIsThereAtTheStartIsUsed() {
        var model = DesktopModel(features: DesktopFeatures(notifications: .always))
        let started = DesktopEvent.started(jobViewServer: Self.plasma, notificationServer: true, trayWatcher: true)
        #expect(
            model.handle(started, now: Self.at(0))
                == [.askNotificationCapabilities(query: 1), .readManager, .registerTrayIcon])
        let running = Tasks.download()
        let request = JobViewBook.Action.requestView(
            task: Self.task, server: Self.plasma, desktopEntry: KDEJobView.desktopEntry, capabilities: 3,
            hints: JobViewHints.request(for: running)
        )
        #expect(
            model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
                == [
                    .jobView(request), .setTrayToolTip(TrayToolTip(tasks: [running])),
                    .updateTrayMenu(TrayMenu(tasks: [running]).updates(since: TrayMenu())),
                ])
    }

    /// The menu follows counts kept task by task (a change must not cost a pass over every task): after any run of
    /// additions, state changes and removals it is the menu worked out from all the tasks.
    @Test func theTrayMenuFollowsEveryTasksState() {
        var model = Self.model(Self.trayOnly)
        var random = SplitMix64(seed: 21)
        let states: [TaskStateName] = [.running, .suspended, .queued, .canceling, .completed]
        var sawBoth = false
        for step in 0..<2_000 {
            let path = HaulBus.taskPath(UInt32.random(in: 1...12, using: &random))
            let state = states.randomElement(using: &random)!
            switch UInt8.random(in: 0..<4, using: &random) {
            case 0: _ = model.handle(.taskRemoved(path), now: Self.at(step))
            case 1: _ = model.handle(.taskAdded(path, Tasks.properties(state)), now: Self.at(step))
            default:
                let change = TaskProperty.values([.state: .string(state.rawValue)])
                _ = model.handle(.taskChanged(path, change), now: Self.at(step))
            }
            #expect(model.trayMenu == TrayMenu(tasks: model.tasks.values), "step \(step)")
            sawBoth = sawBoth || model.trayMenu.anyRunning && model.trayMenu.anySuspended
        }
        #expect(sawBoth, "the run had running and suspended tasks at once")
    }

    @Test func nothingIsShownThatWasTurnedOff() {
        var model = DesktopModel(features: DesktopFeatures(jobViews: false, statusNotifier: false, notifications: .off))
        let started = DesktopEvent.started(jobViewServer: Self.plasma, notificationServer: true, trayWatcher: true)
        #expect(model.handle(started, now: Self.at(0)).isEmpty)
        #expect(model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1)).isEmpty)
        #expect(model.handle(.taskChanged(Self.task, Tasks.properties(.completed)), now: Self.at(2)).isEmpty)
        #expect(model.handle(.indicatorChanged(Self.visible), now: Self.at(3)).isEmpty)
        let watcher = DesktopEvent.nameOwnerChanged(name: StatusNotifierItem.watcherName, owner: ":1.3")
        #expect(model.handle(watcher, now: Self.at(4)).isEmpty)
    }

    // MARK: Notifications

    @Test func notificationsWaitForTheServersCapabilitiesThenGoOutInOrder() throws {
        var model = Self.model(Self.notificationsOnly)
        let file = "/d/a&b.iso"
        _ = model.handle(.taskAdded(Self.task, Tasks.properties(file: file)), now: Self.at(1))
        #expect(
            model.handle(.taskChanged(Self.task, Tasks.properties(.completed, file: file)), now: Self.at(2))
                == [.askNotificationCapabilities(query: 1)])
        let second = HaulBus.taskPath(2)
        _ = model.handle(.taskAdded(second, Tasks.properties(id: 2)), now: Self.at(3))
        let failed = Tasks.properties(.completed, error: .network, message: "refused", id: 2)
        #expect(model.handle(.taskChanged(second, failed), now: Self.at(4)).isEmpty, "one query is enough")

        let first = try Self.notification(Tasks.download(.completed, file: file))
        let other = try Self.notification(Tasks.download(.completed, error: .network, message: "refused", id: 2))
        #expect(
            model.handle(.notificationCapabilities(query: 1, Self.everything), now: Self.at(5))
                == [.notify(first, Self.everything), .notify(other, Self.everything)], "in order, once known")

        let third = HaulBus.taskPath(3)
        _ = model.handle(.taskAdded(third, Tasks.properties(id: 3)), now: Self.at(6))
        let done = try Self.notification(Tasks.download(.completed, id: 3))
        #expect(
            model.handle(.taskChanged(third, Tasks.properties(.completed, id: 3)), now: Self.at(7))
                == [.notify(done, Self.everything)], "known: at once")
    }

    @Test func anAnswerFromTheServerBeforeIsIgnoredAndASilentServerGetsPlainText() throws {
        var model = Self.model(Self.notificationsOnly)
        _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
        #expect(
            model.handle(.taskChanged(Self.task, Tasks.properties(.completed)), now: Self.at(2))
                == [.askNotificationCapabilities(query: 1)])
        // Another server takes the name while the first is asked: its answer no longer holds.
        let server = DesktopEvent.nameOwnerChanged(name: TransferNotification.busName, owner: ":1.8")
        #expect(model.handle(server, now: Self.at(3)) == [.askNotificationCapabilities(query: 2)])
        #expect(model.handle(.notificationCapabilities(query: 1, Self.everything), now: Self.at(4)).isEmpty)
        let done = try Self.notification(Tasks.download(.completed))
        #expect(
            model.handle(.notificationCapabilities(query: 2, nil), now: Self.at(5))
                == [.notify(done, .none)], "no answer: plain text, no buttons")
        // Not knowing, the next notification asks again.
        let second = HaulBus.taskPath(2)
        _ = model.handle(.taskAdded(second, Tasks.properties(id: 2)), now: Self.at(6))
        #expect(
            model.handle(.taskChanged(second, Tasks.properties(.completed, id: 2)), now: Self.at(7))
                == [.askNotificationCapabilities(query: 3)])
    }

    // MARK: Tray icon

    @Test func theToolTipChangesAtMostOnceASecond() {
        var model = Self.model(Self.trayOnly, trayWatcher: true)
        let one = Tasks.download(bytes: 1, expected: 100)
        #expect(
            model.handle(.taskAdded(Self.task, Tasks.properties(bytes: 1, expected: 100)), now: Self.at(0))
                == [
                    .setTrayToolTip(TrayToolTip(tasks: [one])),
                    .updateTrayMenu(TrayMenu(tasks: [one]).updates(since: TrayMenu())),
                ])
        #expect(
            model.handle(.taskChanged(Self.task, Self.progress(20)), now: Self.at(300))
                == [.armToolTipTimer(at: Self.at(1000))])
        #expect(model.handle(.taskChanged(Self.task, Self.progress(50)), now: Self.at(600)).isEmpty, "armed already")
        let half = TrayToolTip(tasks: [Tasks.download(bytes: 50, expected: 100)])
        #expect(model.handle(.toolTipDue, now: Self.at(1000)) == [.setTrayToolTip(half)])
        #expect(model.trayToolTip == half)
        // Checked again a second later: unchanged, so nothing goes out.
        #expect(
            model.handle(.taskChanged(Self.task, TaskProperty.values([.rate: .uint64(7)])), now: Self.at(1500))
                == [.armToolTipTimer(at: Self.at(2000))])
        #expect(model.handle(.toolTipDue, now: Self.at(2000)).isEmpty)
        #expect(model.handle(.toolTipDue, now: Self.at(2500)).isEmpty, "no timer was armed")
    }

    /// No watcher, no panel showing the icon: progress arms no timer. A watcher that comes gets the tooltip as it is
    /// then, before the registration; once it has gone, a timer still armed sends nothing.
    @Test func theToolTipFollowsProgressOnlyWhileAWatcherIsThere() {
        var model = Self.model(Self.trayOnly)
        let one = Tasks.download(bytes: 1, expected: 100)
        #expect(
            model.handle(.taskAdded(Self.task, Tasks.properties(bytes: 1, expected: 100)), now: Self.at(0))
                == [.updateTrayMenu(TrayMenu(tasks: [one]).updates(since: TrayMenu()))])
        #expect(model.handle(.taskChanged(Self.task, Self.progress(20)), now: Self.at(300)).isEmpty)
        #expect(model.trayToolTip == TrayToolTip(tasks: [TaskSnapshot]()))

        let watcher = StatusNotifierItem.watcherName
        let fifth = TrayToolTip(tasks: [Tasks.download(bytes: 20, expected: 100)])
        #expect(
            model.handle(.nameOwnerChanged(name: watcher, owner: ":1.4"), now: Self.at(400))
                == [.setTrayToolTip(fifth), .registerTrayIcon])
        #expect(
            model.handle(.taskChanged(Self.task, Self.progress(50)), now: Self.at(500))
                == [.armToolTipTimer(at: Self.at(1400))])
        #expect(model.handle(.nameOwnerChanged(name: watcher, owner: ""), now: Self.at(600)).isEmpty)
        #expect(model.handle(.toolTipDue, now: Self.at(1400)).isEmpty, "the watcher has gone")
        #expect(model.handle(.taskChanged(Self.task, Self.progress(70)), now: Self.at(2000)).isEmpty)
        #expect(model.trayToolTip == fifth)
    }

    @Test func theIndicatorsVisibilityIsTheTrayIconsStatusAndAWatcherGetsItRegistered() {
        var model = Self.model(Self.trayOnly)
        #expect(model.handle(.indicatorChanged(Self.visible), now: Self.at(1)) == [.setTrayStatus(visible: true)])
        let active = IndicatorProperty.values([.state: .string(IndicatorStateName.active.rawValue)])
        #expect(model.handle(.indicatorChanged(active), now: Self.at(2)).isEmpty)
        let watcher = StatusNotifierItem.watcherName
        #expect(model.handle(.nameOwnerChanged(name: watcher, owner: ":1.4"), now: Self.at(3)) == [.registerTrayIcon])
        #expect(model.handle(.nameOwnerChanged(name: watcher, owner: ""), now: Self.at(4)).isEmpty)
    }

    // MARK: Job views

    @Test func aJobViewFollowsTheTaskAndItsButtonsControlIt() {
        var model = Self.model(Self.jobViewsOnly)
        _ = model.handle(.nameOwnerChanged(name: KDEJobView.serverName, owner: Self.plasma), now: Self.at(0))
        _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
        // Plasma answers after a change: the view gets the state as it is then.
        _ = model.handle(.taskChanged(Self.task, TaskProperty.values([.bytesReceived: .uint64(10)])), now: Self.at(2))
        let update = JobViewBook.Action.update(
            view: Self.view, properties: JobViewHints.update(for: Tasks.download(bytes: 10))
        )
        #expect(
            model.handle(.viewAnswered(task: Self.task, server: Self.plasma, view: Self.view), now: Self.at(3))
                == [.jobView(update)])
        #expect(
            model.handle(.jobViewRequest(view: Self.view, signal: "suspendRequested"), now: Self.at(4))
                == [.jobView(.control(task: Self.task, method: .suspend))])
        let terminate = JobViewBook.Action.terminate(
            view: Self.view, errorCode: KDEJobView.ErrorCode.userCanceled,
            errorMessage: "hauld stopped; the transfer goes on when it starts again."
        )
        #expect(model.handle(.stopping, now: Self.at(5)) == [.jobView(terminate)])
    }

    @Test func aRefusedViewIsNotAskedForAgain() {
        var model = Self.model(Self.jobViewsOnly)
        _ = model.handle(.nameOwnerChanged(name: KDEJobView.serverName, owner: Self.plasma), now: Self.at(0))
        _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
        #expect(model.handle(.viewAnswered(task: Self.task, server: Self.plasma, view: nil), now: Self.at(2)).isEmpty)
        #expect(model.handle(.taskChanged(Self.task, Tasks.properties(bytes: 5)), now: Self.at(3)).isEmpty)
    }

    @Test func theTrayMenuFollowsTheTasksAndTheManagersLimit() {
        var model = DesktopModel(features: Self.trayOnly)
        let started = DesktopEvent.started(jobViewServer: nil, notificationServer: false, trayWatcher: true)
        #expect(model.handle(started, now: Self.at(0)) == [.readManager, .registerTrayIcon])
        let limit = ManagerProperty.downloadRateLimit.name
        let fiveMiB = 5 * TrayMenu.mebibyte
        let read = model.handle(.managerRead([limit: .variant(.uint64(fiveMiB))]), now: Self.at(1))
        #expect(read == [.updateTrayMenu(TrayMenu(downloadRateLimit: fiveMiB).updates(since: TrayMenu()))])
        #expect(model.trayMenu == TrayMenu(downloadRateLimit: fiveMiB))

        let effects = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(2))
        let running = TrayMenu(tasks: [Tasks.download()], downloadRateLimit: fiveMiB)
        #expect(effects.contains(.updateTrayMenu(running.updates(since: TrayMenu(downloadRateLimit: fiveMiB)))))
        // Progress changes no item.
        #expect(
            !model.handle(.taskChanged(Self.task, Self.progress(5)), now: Self.at(3)).contains {
                if case .updateTrayMenu = $0 { true } else { false }
            })
        #expect(model.handle(.managerChanged([limit: .uint64(0)]), now: Self.at(4)) == [
            .updateTrayMenu([
                .init(item: .noLimit, properties: [DBusMenu.Key.toggleState: .int32(1)]),
                .init(item: .limit5MiB, properties: [DBusMenu.Key.toggleState: .int32(0)]),
            ])
        ])
        // A `GetAll` answer older than the signal changes nothing.
        #expect(model.handle(.managerRead([limit: .uint64(fiveMiB)]), now: Self.at(5)).isEmpty)
        #expect(model.trayMenu.downloadRateLimit == 0)
        #expect(model.handle(.managerRead(nil), now: Self.at(6)).isEmpty)
    }

    @Test func aClickOnTheTrayMenuAsksForItsAction() {
        var model = Self.model(Self.trayOnly)
        #expect(model.handle(.trayMenuEvent(.suspendAll, event: DBusMenu.clickedEvent), now: Self.at(1)).isEmpty)
        _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(2))
        #expect(
            model.handle(.trayMenuEvent(.suspendAll, event: DBusMenu.clickedEvent), now: Self.at(3))
                == [.trayMenu(.manager(.suspendAll))])
        #expect(model.handle(.trayMenuEvent(.suspendAll, event: "hovered"), now: Self.at(4)).isEmpty)
        #expect(
            model.handle(.trayMenuEvent(.limit1MiB, event: DBusMenu.clickedEvent), now: Self.at(5))
                == [.trayMenu(.setDownloadRateLimit(TrayMenu.mebibyte))])
        #expect(
            model.handle(.trayMenuEvent(.openDownloads, event: DBusMenu.clickedEvent), now: Self.at(6))
                == [.trayMenu(.openDownloadsFolder)])
        #expect(model.handle(.trayMenuEvent(.separator, event: DBusMenu.clickedEvent), now: Self.at(7)).isEmpty)

        var noTray = Self.model(Self.jobViewsOnly)
        _ = noTray.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
        #expect(noTray.handle(.trayMenuEvent(.suspendAll, event: DBusMenu.clickedEvent), now: Self.at(2)).isEmpty)
        let limit = DesktopEvent.managerChanged([ManagerProperty.downloadRateLimit.name: .uint64(1)])
        #expect(noTray.handle(limit, now: Self.at(3)).isEmpty)
    }
}
