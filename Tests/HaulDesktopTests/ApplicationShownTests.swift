import DBusKit
import HaulContract
import HaulDesktop
import Testing

/// The application a task came from (its `Application`) is who the desktop says the transfer is for.
@Suite(.timeLimit(.minutes(2))) struct ApplicationShownTests {
    static func task(_ state: TaskStateName = .running, application: String) -> TaskSnapshot {
        var properties = Tasks.properties(state)
        properties[TaskProperty.application.name] = .string(application)
        return TaskSnapshot(properties: properties)
    }

    @Test(arguments: [
        ("org.mozilla.firefox", "org.mozilla.firefox", "firefox"),
        ("chromium", "chromium", "chromium"),
        ("", KDEJobView.desktopEntry, KDEJobView.applicationName),
    ])
    func theJobViewNamesTheApplication(_ application: String, _ entry: String, _ name: String) {
        let task = Self.task(application: application)
        #expect(KDEJobView.entry(for: task) == entry)
        #expect(JobViewHints.request(for: task)["application-display-name"] == .string(name))
        #expect(JobViewHints.request(for: task)["application-icon-name"] == .string(KDEJobView.iconName))
        var book = JobViewBook()
        let actions = book.serverOwner(":1.9", tasks: [HaulBus.taskPath(1): task], now: .now)
        guard case .requestView(_, _, let desktopEntry, _, _)? = actions.first else {
            Issue.record("no view requested: \(actions)")
            return
        }
        #expect(desktopEntry == entry)
    }

    @Test func theNotificationComesFromTheApplication() throws {
        let note = try #require(
            TransferNotification(
                task: HaulBus.taskPath(1), before: Self.task(application: "org.kde.dolphin"),
                after: Self.task(.completed, application: "org.kde.dolphin")
            )
        )
        #expect(note.arguments(.none, icon: "haul").first == .string("dolphin"))
        let unknown = try #require(
            TransferNotification(
                task: HaulBus.taskPath(1), before: Self.task(application: ""),
                after: Self.task(.completed, application: "")
            )
        )
        #expect(unknown.arguments(.none, icon: "haul").first == .string(KDEJobView.applicationName))
    }
}
