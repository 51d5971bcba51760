import DBusKit
import HaulContract
import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct JobViewBookTests {
    static let task = HaulBus.taskPath(1)
    static let view: ObjectPath = "/org/kde/notificationmanager/jobs/JobView_7"
    static let plasma = ":1.7"
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A book with the server present and a granted view for `task`, plus the actions of the grant.
    static func openBook(_ snapshot: TaskSnapshot = Tasks.download()) -> (JobViewBook, [JobViewBook.Action]) {
        var book = JobViewBook()
        _ = book.serverOwner(plasma, tasks: [task: snapshot], now: at(0))
        let actions = book.viewGranted(view, for: task, from: plasma, snapshot, now: at(0))
        return (book, actions)
    }

    @Test func withoutAServerNothingHappens() {
        var book = JobViewBook()
        #expect(book.taskChanged(Self.task, Tasks.download(), now: Self.at(0)).isEmpty)
    }

    @Test func unfinishedTasksGetAViewAndCompletedOnesDoNot() {
        var book = JobViewBook()
        let running = Tasks.download(id: 1)
        let actions = book.serverOwner(Self.plasma, tasks: [
            Self.task: running, HaulBus.taskPath(2): Tasks.download(.completed, id: 2),
        ], now: Self.at(0))
        #expect(actions == [
            .requestView(
                task: Self.task, server: Self.plasma, desktopEntry: KDEJobView.desktopEntry, capabilities: 3,
                hints: JobViewHints.request(for: running)
            )
        ])
        // Changes while the request is out wait for its answer, which sends the state as it is then.
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 10), now: Self.at(1)).isEmpty)
        #expect(book.viewGranted(Self.view, for: Self.task, from: Self.plasma, Tasks.download(bytes: 10), now: Self.at(2)) == [
            .update(view: Self.view, properties: JobViewHints.update(for: Tasks.download(bytes: 10)))
        ])
    }

    /// The owner seen at start-up and then again in a queued `NameOwnerChanged` asks for no second set of views.
    @Test func theSameOwnerSeenTwiceChangesNothing() {
        var (book, _) = Self.openBook()
        #expect(book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(1)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(.suspended), now: Self.at(2)).count == 1)
    }

    @Test func aNewOwnerGetsNewViewsAndTheOldOnesAnswersAreIgnored() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(0))
        let restarted = book.serverOwner(":1.9", tasks: [Self.task: Tasks.download()], now: Self.at(1))
        guard case .requestView(Self.task, ":1.9", _, _, _)? = restarted.first, restarted.count == 1 else {
            Issue.record("\(restarted)")
            return
        }
        // The first owner answers late: its view went with it.
        #expect(book.viewGranted(Self.view, for: Self.task, from: Self.plasma, Tasks.download(), now: Self.at(2)).isEmpty)
        #expect(book.viewGranted("/v2", for: Self.task, from: ":1.9", Tasks.download(), now: Self.at(2)).count == 1)
    }

    @Test func updatesCarryOnlyWhatChanged() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 10, expected: 100), now: Self.at(600)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 50, expected: 100), now: Self.at(600)) == [
            .update(view: Self.view, properties: ["processedBytes": .uint64(50), "percent": .uint32(50)])
        ])
    }

    /// Progress goes out at most twice a second; what was held back goes with the next update, and any other
    /// change goes at once.
    @Test func progressIsThrottledButStateChangesAreNot() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 20, expected: 100), now: Self.at(100)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 30, expected: 100), now: Self.at(499)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 40, expected: 100), now: Self.at(500)) == [
            .update(view: Self.view, properties: ["processedBytes": .uint64(40), "percent": .uint32(40)])
        ])
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 45, expected: 100), now: Self.at(600)).isEmpty)
        let suspended = book.taskChanged(Self.task, Tasks.download(.suspended, bytes: 45, expected: 100), now: Self.at(601))
        #expect(suspended == [
            .update(view: Self.view, properties: [
                "processedBytes": .uint64(45), "percent": .uint32(45), "suspended": .boolean(true),
            ])
        ])
    }

    @Test func completionSendsTheLastUpdateThenTerminates() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        let actions = book.taskChanged(Self.task, Tasks.download(.completed, bytes: 100, expected: 100), now: Self.at(1))
        #expect(actions.count == 2)
        #expect(actions.last == .terminate(view: Self.view, errorCode: 0, errorMessage: ""))
        // Done: later changes and removal say nothing more.
        #expect(book.taskChanged(Self.task, nil, now: Self.at(2)).isEmpty)
    }

    @Test func aRemovedTaskEndsItsViewAsAborted() {
        var (book, _) = Self.openBook()
        let actions = book.taskChanged(Self.task, nil, now: Self.at(1))
        #expect(actions.count == 1)
        guard case .terminate(Self.view, 147, _)? = actions.first else {
            Issue.record("\(actions)")
            return
        }
    }

    @Test func aTaskThatCompletedBeforeItsViewArrivedStillEndsIt() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(0))
        let done = Tasks.download(.completed, error: .cancelled, message: "cancelled")
        let actions = book.viewGranted(Self.view, for: Self.task, from: Self.plasma, done, now: Self.at(1))
        #expect(actions.last == .terminate(view: Self.view, errorCode: 1, errorMessage: "cancelled"))
    }

    /// A view granted for a task removed meanwhile is ended at once, quietly, rather than left hanging.
    @Test func aViewNoOneWillFillIsEndedQuietly() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(0))
        #expect(book.taskChanged(Self.task, nil, now: Self.at(1)).isEmpty)
        #expect(book.viewGranted(Self.view, for: Self.task, from: Self.plasma, nil, now: Self.at(2)) == [
            .terminate(view: Self.view, errorCode: 1, errorMessage: "")
        ])
    }

    @Test func theViewsButtonsControlTheTask() {
        var (book, grant) = Self.openBook()
        for (signal, method) in [
            ("suspendRequested", TaskMethod.suspend), ("resumeRequested", .resume), ("cancelRequested", .cancel),
        ] {
            #expect(book.viewRequested(signal, view: Self.view) == [.control(task: Self.task, method: method)])
        }
        #expect(book.viewRequested("updateRequested", view: Self.view) == grant)
        #expect(book.viewRequested("suspendRequested", view: "/elsewhere").isEmpty)
        #expect(book.viewRequested("explode", view: Self.view).isEmpty)
    }

    @Test func aRefusedRequestIsNotRepeatedUntilANewOwnerComes() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(0))
        book.viewRefused(for: Self.task, from: Self.plasma)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 5), now: Self.at(1)).isEmpty)
        _ = book.serverOwner(nil, tasks: [Self.task: Tasks.download(bytes: 5)], now: Self.at(2))
        #expect(book.serverOwner(":1.9", tasks: [Self.task: Tasks.download(bytes: 5)], now: Self.at(3)).count == 1)
    }

    @Test func aVanishedServerTakesItsViewsAlong() {
        var (book, _) = Self.openBook()
        #expect(book.serverOwner(nil, tasks: [Self.task: Tasks.download()], now: Self.at(1)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(.completed), now: Self.at(2)).isEmpty)
        #expect(book.viewRequested("cancelRequested", view: Self.view).isEmpty)
    }

    /// Ended with `ERR_USER_CANCELED`, which Plasma removes quietly: the transfers go on after a restart, so a
    /// "failed" popup per transfer would be wrong.
    @Test func shutdownEndsEveryViewQuietly() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download(), "/t/2": Tasks.download(id: 2)], now: Self.at(0))
        _ = book.viewGranted(Self.view, for: Self.task, from: Self.plasma, Tasks.download(), now: Self.at(0))
        let actions = book.shutdown()
        guard case .terminate(Self.view, 1, let message)? = actions.first, actions.count == 1 else {
            Issue.record("\(actions)")
            return
        }
        #expect(message.contains("hauld stopped"))
        #expect(book.taskChanged(Self.task, Tasks.download(), now: Self.at(1)).isEmpty)
        // The request still out when hauld began to stop is answered: that view ends too.
        #expect(book.viewGranted("/v2", for: "/t/2", from: Self.plasma, Tasks.download(id: 2), now: Self.at(2)) == [
            .terminate(view: "/v2", errorCode: 1, errorMessage: "")
        ])
        #expect(book.serverOwner(":1.9", tasks: [Self.task: Tasks.download()], now: Self.at(3)).isEmpty)
    }
}
