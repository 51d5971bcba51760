import DBusKit
import HaulService
import Testing

/// Tasks as the contract shows them, for the desktop bridge's pure parts.
enum Tasks {
    static func download(
        _ state: String = "running", bytes: UInt64 = 0, expected: Int64 = -1, rate: UInt64 = 0, error: String = "",
        message: String = "", file: String = "/home/u/Downloads/debian.iso", id: UInt32 = 1
    ) -> TaskSnapshot {
        TaskSnapshot(properties: [
            "Id": .uint32(id), "Kind": .string("download"), "URL": .string("https://example.org/debian.iso"),
            "Path": .string(file), "State": .string(state), "BytesReceived": .uint64(bytes),
            "BytesExpectedToReceive": .int64(expected), "BytesSent": .uint64(0), "BytesExpectedToSend": .int64(0),
            "DownloadProgress": .double(expected > 0 ? Double(bytes) / Double(expected) : 0),
            "UploadProgress": .double(0), "Rate": .uint64(rate), "Cancellable": .boolean(state != "completed"),
            "Pausable": .boolean(state != "completed"), "Resumable": .boolean(true),
            "ErrorName": .string(error.isEmpty ? "" : "org.haul.Haul1.Error.\(error)"),
            "ErrorMessage": .string(message),
            "HTTPStatus": .uint32(error == "HTTP" ? 404 : 200),
        ])
    }
}

@Suite struct JobViewHintsTests {
    @Test func aRunningDownloadShowsItsProgress() {
        let hints = JobViewHints.update(for: Tasks.download(bytes: 250, expected: 1000, rate: 42))
        #expect(hints["title"] == .string("Downloading debian.iso"))
        #expect(hints["descriptionLabel1"] == .string("Source"))
        #expect(hints["descriptionValue1"] == .string("https://example.org/debian.iso"))
        #expect(hints["descriptionValue2"] == .string("/home/u/Downloads/debian.iso"))
        #expect(hints["destUrl"] == .string("file:///home/u/Downloads/"))
        #expect(hints["processedBytes"] == .uint64(250))
        #expect(hints["totalBytes"] == .uint64(1000))
        #expect(hints["percent"] == .uint32(25))
        #expect(hints["speed"] == .uint64(42))
        #expect(hints["suspended"] == .boolean(false))
        #expect(hints["totalFiles"] == .uint64(1))
    }

    /// Sent as 0 rather than left out: a key left out of an update keeps its old value on screen.
    @Test func anUnknownSizeHasZeroTotalAndPercent() {
        let hints = JobViewHints.update(for: Tasks.download(bytes: 250))
        #expect(hints["totalBytes"] == .uint64(0))
        #expect(hints["percent"] == .uint32(0))
    }

    /// The bridge reads progress from the bus: any double becomes a percent from 0 to 100, never a trap.
    @Test(arguments: [Double.nan, -.nan, .infinity, -.infinity, -1, 2, 1e308])
    func anyProgressIsAPercent(_ progress: Double) {
        var task = Tasks.download(bytes: 250, expected: 1000)
        task.apply(["DownloadProgress": .double(progress)])
        #expect((0...100).contains(task.percent ?? 999))
    }

    @Test func aSuspendedTaskHasNoSpeed() {
        let hints = JobViewHints.update(for: Tasks.download("suspended", bytes: 250, expected: 1000, rate: 42))
        #expect(hints["suspended"] == .boolean(true))
        #expect(hints["speed"] == .uint64(0))
    }

    @Test func theRequestNamesTheApplicationAndOffersTheButtonsTheTaskAllows() {
        let task = Tasks.download(bytes: 1, expected: 2)
        #expect(JobViewHints.capabilities(of: task) == 3)
        #expect(JobViewHints.capabilities(of: Tasks.download("completed")) == 0)
        let hints = JobViewHints.request(for: task)
        #expect(hints["application-display-name"] == .string("Haul"))
        #expect(hints["application-icon-name"] == .string("network-transmit-receive"))
        #expect(hints["title"] == .string("Downloading debian.iso"))
    }

    @Test(arguments: [
        ("", UInt32(0)), ("Cancelled", 1), ("Network", 123), ("Timeout", 149), ("DiskFull", 161),
        ("PermissionDenied", 116), ("FileExists", 112), ("HTTP", 111), ("ChecksumMismatch", 163),
    ])
    func completedTasksTerminateWithTheirKIOCode(_ error: String, _ code: UInt32) {
        let task = Tasks.download("completed", error: error, message: error.isEmpty ? "" : "it went wrong")
        let termination = JobViewHints.termination(for: task)
        #expect(termination.errorCode == code)
        #expect(termination.errorMessage == (error.isEmpty ? "" : "it went wrong"))
    }

    @Test func aTaskThatVanishedUnfinishedIsAborted() {
        #expect(JobViewHints.termination(for: nil).errorCode == 147)
        #expect(JobViewHints.termination(for: Tasks.download()).errorCode == 147)
    }
}

@Suite struct JobViewBookTests {
    static let task: ObjectPath = "/org/haul/Haul1/Tasks/1"
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
            Self.task: running, "/org/haul/Haul1/Tasks/2": Tasks.download("completed", id: 2),
        ], now: Self.at(0))
        #expect(actions == [
            .requestView(task: Self.task, server: Self.plasma, capabilities: 3, hints: JobViewHints.request(for: running))
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
        #expect(book.taskChanged(Self.task, Tasks.download("suspended"), now: Self.at(2)).count == 1)
    }

    @Test func aNewOwnerGetsNewViewsAndTheOldOnesAnswersAreIgnored() {
        var book = JobViewBook()
        _ = book.serverOwner(Self.plasma, tasks: [Self.task: Tasks.download()], now: Self.at(0))
        let restarted = book.serverOwner(":1.9", tasks: [Self.task: Tasks.download()], now: Self.at(1))
        guard case .requestView(Self.task, ":1.9", _, _)? = restarted.first, restarted.count == 1 else {
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
        let suspended = book.taskChanged(Self.task, Tasks.download("suspended", bytes: 45, expected: 100), now: Self.at(601))
        #expect(suspended == [
            .update(view: Self.view, properties: [
                "processedBytes": .uint64(45), "percent": .uint32(45), "suspended": .boolean(true),
            ])
        ])
    }

    @Test func completionSendsTheLastUpdateThenTerminates() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        let actions = book.taskChanged(Self.task, Tasks.download("completed", bytes: 100, expected: 100), now: Self.at(1))
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
        let done = Tasks.download("completed", error: "Cancelled", message: "cancelled")
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
            ("suspendRequested", "Suspend"), ("resumeRequested", "Resume"), ("cancelRequested", "Cancel"),
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
        #expect(book.taskChanged(Self.task, Tasks.download("completed"), now: Self.at(2)).isEmpty)
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

@Suite struct TrayToolTipTests {
    @Test func idle() {
        #expect(TrayToolTip(tasks: []).subTitle == "No transfers running")
        #expect(TrayToolTip(tasks: [Tasks.download("completed")]).subTitle == "No transfers running")
    }

    @Test func runningTransfersAreNamedWithTheirProgress() {
        let tasks = [
            Tasks.download(bytes: 42, expected: 100, file: "/d/a.iso", id: 1),
            Tasks.download(bytes: 5, file: "/d/b.bin", id: 2),
            Tasks.download("suspended", file: "/d/c.bin", id: 3),
        ]
        let tip = TrayToolTip(tasks: tasks)
        #expect(tip.title == "Haul")
        #expect(tip.subTitle == "2 transfers: a.iso 42%, b.bin; 1 suspended")
    }

    @Test func manyTransfersAreCounted() {
        let tasks = (1...5).map { Tasks.download(file: "/d/\($0).bin", id: UInt32($0)) }
        #expect(TrayToolTip(tasks: tasks).subTitle == "5 transfers: 1.bin, 2.bin, 3.bin, and 2 more")
    }

    @Test func theValueHasTheToolTipSignature() {
        #expect(TrayToolTip(tasks: []).value.type.signature == "(sa(iiay)ss)")
    }
}

@Suite struct TransferNotificationTests {
    @Test func aCompletedDownloadIsAnnounced() throws {
        let note = try #require(TransferNotification(before: Tasks.download(), after: Tasks.download("completed")))
        #expect(note.summary == "Download complete")
        #expect(note.body == "debian.iso")
        #expect(note.category == "transfer.complete")
        let notify = DBusMessage.methodCall(
            destination: nil, path: "/", interface: nil, member: "Notify", body: note.arguments(bodyMarkup: true)
        )
        #expect(notify.signature == "susssasa{sv}i")
    }

    @Test func aFailureSaysWhyEscapedOnlyForServersReadingMarkup() throws {
        let failed = Tasks.download("completed", error: "HTTP", message: "HTTP 404 <Not Found>", file: "/d/a&b.iso")
        let note = try #require(TransferNotification(before: Tasks.download("suspended"), after: failed))
        #expect(note.summary == "Download failed")
        #expect(note.body == "a&b.iso: HTTP 404 <Not Found>")
        #expect(note.arguments(bodyMarkup: true)[4] == .string("a&amp;b.iso: HTTP 404 &lt;Not Found&gt;"))
        #expect(note.arguments(bodyMarkup: false)[4] == .string("a&b.iso: HTTP 404 <Not Found>"))
        #expect(note.category == "transfer.error")
    }

    @Test func cancelsAndTasksSeenOnlyCompletedAreNotAnnounced() {
        let cancelled = Tasks.download("completed", error: "Cancelled", message: "cancelled")
        #expect(TransferNotification(before: Tasks.download(), after: cancelled) == nil)
        #expect(TransferNotification(before: Tasks.download("completed"), after: Tasks.download("completed")) == nil)
        #expect(TransferNotification(before: Tasks.download(), after: Tasks.download(bytes: 9)) == nil)
    }
}
