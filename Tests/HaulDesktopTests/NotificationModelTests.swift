import DBusKit
import HaulContract
import HaulDesktop
import Testing

/// The desktop model's notifications: which transfers are announced, and what their buttons do.
@Suite(.timeLimit(.minutes(2))) struct NotificationModelTests {
    static let task = HaulBus.taskPath(1)
    static let plasma = ":1.7"
    static let view: ObjectPath = "/org/kde/notificationmanager/jobs/JobView_1"
    static let start = ContinuousClock.now
    static let everything = NotificationCapabilities(bodyMarkup: true, actions: true)
    static let file = "/home/u/Downloads/debian.iso"

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A model whose notification server has answered with every capability; Plasma's job view server there too
    /// when `plasma`.
    static func model(_ mode: NotificationMode, plasma: Bool = false) -> DesktopModel {
        var model = DesktopModel(features: DesktopFeatures(jobViews: true, statusNotifier: false, notifications: mode))
        let started = DesktopEvent.started(
            jobViewServer: plasma ? Self.plasma : nil, notificationServer: true, trayWatcher: false
        )
        _ = model.handle(started, now: at(0))
        _ = model.handle(.notificationCapabilities(query: 1, everything), now: at(0))
        return model
    }

    /// The effects of the task at `path` running, then ending as `ending`.
    static func run(
        _ model: inout DesktopModel, _ path: ObjectPath = task, id: UInt32 = 1, until ending: [String: DBusValue]
    ) -> [DesktopEffect] {
        _ = model.handle(.taskAdded(path, Tasks.properties(id: id)), now: at(1))
        return model.handle(.taskChanged(path, ending), now: at(2))
    }

    static func notifications(in effects: [DesktopEffect]) -> [TransferNotification] {
        effects.compactMap { if case .notify(let notification, _) = $0 { notification } else { nil } }
    }

    @Test func whereNoJobViewShowsATransferItsEndingIsAnnouncedByDefault() {
        var model = Self.model(DesktopFeatures().notifications)
        let effects = Self.run(&model, until: Tasks.properties(.completed))
        #expect(Self.notifications(in: effects).map(\.summary) == ["Download complete"])
    }

    /// Plasma shows a job's end itself ("Open", "Open Containing Folder", or the reason it failed): by default a
    /// notification would say it twice; `always` says it anyway.
    @Test(arguments: [(NotificationMode.unlessShownAsJob, 0), (.always, 1), (.off, 0)])
    func aTransferShownAsAKDEJobIsAnnouncedOnlyWhenAskedFor(mode: NotificationMode, expected: Int) {
        for ending in [Tasks.properties(.completed), Tasks.properties(.completed, error: .network, message: "gone")] {
            var model = Self.model(mode, plasma: true)
            _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
            _ = model.handle(.viewAnswered(task: Self.task, server: Self.plasma, view: Self.view), now: Self.at(1))
            let effects = model.handle(.taskChanged(Self.task, ending), now: Self.at(2))
            #expect(Self.notifications(in: effects).count == expected, "\(mode): \(effects)")
            #expect(effects.contains { if case .jobView(.terminate) = $0 { true } else { false } })
        }
    }

    /// A job view Plasma refused shows nothing: the ending is announced.
    @Test func aTransferWhoseViewWasRefusedIsAnnounced() {
        var model = Self.model(.unlessShownAsJob, plasma: true)
        _ = model.handle(.taskAdded(Self.task, Tasks.properties()), now: Self.at(1))
        _ = model.handle(.viewAnswered(task: Self.task, server: Self.plasma, view: nil), now: Self.at(1))
        let effects = model.handle(.taskChanged(Self.task, Tasks.properties(.completed)), now: Self.at(2))
        #expect(Self.notifications(in: effects).count == 1)
    }

    @Test func theButtonsOfAFinishedDownloadOpenAndShowTheFile() throws {
        var model = Self.model(.always)
        let note = try #require(Self.notifications(in: Self.run(&model, until: Tasks.properties(.completed))).first)
        #expect(model.handle(.notified(note, id: 7), now: Self.at(3)).isEmpty)
        #expect(model.handle(.notificationAction(id: 7, key: "open"), now: Self.at(4)) == [.openFile(Self.file)])
        #expect(model.handle(.notificationAction(id: 7, key: "default"), now: Self.at(4)) == [.openFile(Self.file)])
        let show = DesktopEvent.notificationAction(id: 7, key: "show-in-folder")
        #expect(model.handle(show, now: Self.at(5)) == [.showInFolder(Self.file)])
        #expect(model.handle(.notificationAction(id: 7, key: "retry"), now: Self.at(5)).isEmpty, "not its button")
        #expect(model.handle(.notificationAction(id: 8, key: "open"), now: Self.at(5)).isEmpty, "not ours (yet)")
        #expect(model.handle(.notificationAction(id: 7, key: "x"), now: Self.at(5)).isEmpty)
        // Closed, it is forgotten.
        #expect(model.handle(.notificationClosed(id: 7), now: Self.at(6)).isEmpty)
        #expect(model.handle(.notificationAction(id: 7, key: "open"), now: Self.at(7)).isEmpty)
    }

    @Test func retryRetriesTheTaskThatFailed() throws {
        var model = Self.model(.always)
        let second = HaulBus.taskPath(2)
        let failed = Tasks.properties(.completed, error: .network, message: "refused", id: 2)
        let note = try #require(Self.notifications(in: Self.run(&model, second, id: 2, until: failed)).first)
        _ = model.handle(.notified(note, id: 3), now: Self.at(3))
        #expect(model.handle(.notificationAction(id: 3, key: "retry"), now: Self.at(4)) == [.retryTask(second)])
        #expect(model.handle(.notificationAction(id: 3, key: "default"), now: Self.at(4)).isEmpty, "no file to open")
    }

    /// The server's answer and its signals travel apart: a press that overtakes the answer naming its notification
    /// is carried out when the answer comes.
    @Test func aPressBeforeTheAnswerIsCarriedOutWithIt() throws {
        var model = Self.model(.always)
        let note = try #require(Self.notifications(in: Self.run(&model, until: Tasks.properties(.completed))).first)
        #expect(model.handle(.notificationAction(id: 5, key: "show-in-folder"), now: Self.at(3)).isEmpty)
        #expect(model.handle(.notified(note, id: 5), now: Self.at(4)) == [.showInFolder(Self.file)])
        #expect(model.handle(.notificationAction(id: 5, key: "open"), now: Self.at(5)) == [.openFile(Self.file)])
        // Presses on other applications' notifications come too; they never act.
        #expect(model.handle(.notificationAction(id: 6, key: "open"), now: Self.at(6)).isEmpty)
        #expect(model.handle(.notified(note, id: 7), now: Self.at(7)).isEmpty)
        // The press and the close that follows it, both before the answer: carried out, then forgotten.
        #expect(model.handle(.notificationAction(id: 8, key: "open"), now: Self.at(8)).isEmpty)
        #expect(model.handle(.notificationClosed(id: 8), now: Self.at(8)).isEmpty)
        #expect(model.handle(.notified(note, id: 8), now: Self.at(9)) == [.openFile(Self.file)])
        #expect(model.handle(.notificationAction(id: 8, key: "open"), now: Self.at(10)).isEmpty)
    }

    /// Ids are the server's: another server, or a notification that was not shown, has none of ours.
    @Test func anotherServerHasNoneOfTheIds() throws {
        var model = Self.model(.always)
        let note = try #require(Self.notifications(in: Self.run(&model, until: Tasks.properties(.completed))).first)
        _ = model.handle(.notified(note, id: 7), now: Self.at(3))
        let server = DesktopEvent.nameOwnerChanged(name: TransferNotification.busName, owner: ":1.9")
        #expect(model.handle(server, now: Self.at(4)) == [.askNotificationCapabilities(query: 2)])
        #expect(model.handle(.notificationAction(id: 7, key: "open"), now: Self.at(5)).isEmpty)
        _ = model.handle(.notified(note, id: nil), now: Self.at(6))
        #expect(model.handle(.notificationAction(id: 0, key: "open"), now: Self.at(7)).isEmpty)
    }

    /// With no server on the bus, the query (which could have started one) fails: there is no one to tell.
    @Test func withNoServerTheNotificationsAreDropped() {
        var model = DesktopModel(features: DesktopFeatures(jobViews: false, statusNotifier: false))
        _ = model.handle(.started(jobViewServer: nil, notificationServer: false, trayWatcher: false), now: Self.at(0))
        #expect(Self.run(&model, until: Tasks.properties(.completed)) == [.askNotificationCapabilities(query: 1)])
        #expect(model.handle(.notificationCapabilities(query: 1, nil), now: Self.at(3)).isEmpty)
        let second = HaulBus.taskPath(2)
        #expect(
            Self.run(&model, second, id: 2, until: Tasks.properties(.completed, id: 2))
                == [.askNotificationCapabilities(query: 2)], "the next one asks again")
    }

    /// Only the last notifications are remembered, however many the server never says it closed.
    @Test func theBookKeepsTheLastNotifications() throws {
        var model = Self.model(.always)
        let note = try #require(Self.notifications(in: Self.run(&model, until: Tasks.properties(.completed))).first)
        for id in UInt32(1)...100 { _ = model.handle(.notified(note, id: id), now: Self.at(3)) }
        #expect(model.handle(.notificationAction(id: 36, key: "open"), now: Self.at(4)) == [])
        #expect(model.handle(.notificationAction(id: 37, key: "open"), now: Self.at(4)) == [.openFile(Self.file)])
        #expect(model.handle(.notificationAction(id: 100, key: "open"), now: Self.at(4)) == [.openFile(Self.file)])
    }
}
