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

    @Test func anUnknownSizeHasNoTotalNorPercent() {
        let hints = JobViewHints.update(for: Tasks.download(bytes: 250))
        #expect(hints["totalBytes"] == nil)
        #expect(hints["percent"] == nil)
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

    /// A book with the server present and a granted view for `task`, plus the actions of the grant.
    static func openBook(_ snapshot: TaskSnapshot = Tasks.download()) -> (JobViewBook, [JobViewBook.Action]) {
        var book = JobViewBook()
        _ = book.serverAppeared(tasks: [task: snapshot])
        let actions = book.viewGranted(view, for: task, snapshot)
        return (book, actions)
    }

    @Test func withoutAServerNothingHappens() {
        var book = JobViewBook()
        #expect(book.taskChanged(Self.task, Tasks.download()).isEmpty)
    }

    @Test func unfinishedTasksGetAViewAndCompletedOnesDoNot() {
        var book = JobViewBook()
        let running = Tasks.download(id: 1)
        let actions = book.serverAppeared(tasks: [
            Self.task: running, "/org/haul/Haul1/Tasks/2": Tasks.download("completed", id: 2),
        ])
        #expect(actions == [
            .requestView(task: Self.task, capabilities: 3, hints: JobViewHints.request(for: running))
        ])
        // Changes while the request is out wait for its answer, which sends the state as it is then.
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 10)).isEmpty)
        #expect(book.viewGranted(Self.view, for: Self.task, Tasks.download(bytes: 10)) == [
            .update(view: Self.view, properties: JobViewHints.update(for: Tasks.download(bytes: 10)))
        ])
    }

    @Test func updatesCarryOnlyWhatChanged() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 10, expected: 100)).isEmpty)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 50, expected: 100)) == [
            .update(view: Self.view, properties: ["processedBytes": .uint64(50), "percent": .uint32(50)])
        ])
    }

    @Test func completionSendsTheLastUpdateThenTerminates() {
        var (book, _) = Self.openBook(Tasks.download(bytes: 10, expected: 100))
        let actions = book.taskChanged(Self.task, Tasks.download("completed", bytes: 100, expected: 100))
        #expect(actions.count == 2)
        #expect(actions.last == .terminate(view: Self.view, errorCode: 0, errorMessage: ""))
        // Done: later changes and removal say nothing more.
        #expect(book.taskChanged(Self.task, nil).isEmpty)
    }

    @Test func aRemovedTaskEndsItsViewAsAborted() {
        var (book, _) = Self.openBook()
        let actions = book.taskChanged(Self.task, nil)
        #expect(actions.count == 1)
        guard case .terminate(Self.view, 147, _)? = actions.first else {
            Issue.record("\(actions)")
            return
        }
    }

    @Test func aTaskThatCompletedBeforeItsViewArrivedStillEndsIt() {
        var book = JobViewBook()
        _ = book.serverAppeared(tasks: [Self.task: Tasks.download()])
        let done = Tasks.download("completed", error: "Cancelled", message: "cancelled")
        let actions = book.viewGranted(Self.view, for: Self.task, done)
        #expect(actions.last == .terminate(view: Self.view, errorCode: 1, errorMessage: "cancelled"))
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

    @Test func aRefusedRequestIsNotRepeatedUntilTheServerReturns() {
        var book = JobViewBook()
        _ = book.serverAppeared(tasks: [Self.task: Tasks.download()])
        book.viewRefused(for: Self.task)
        #expect(book.taskChanged(Self.task, Tasks.download(bytes: 5)).isEmpty)
        book.serverVanished()
        #expect(book.serverAppeared(tasks: [Self.task: Tasks.download(bytes: 5)]).count == 1)
    }

    @Test func aVanishedServerTakesItsViewsAlong() {
        var (book, _) = Self.openBook()
        book.serverVanished()
        #expect(book.taskChanged(Self.task, Tasks.download("completed")).isEmpty)
        #expect(book.viewRequested("cancelRequested", view: Self.view).isEmpty)
    }

    @Test func shutdownEndsEveryOpenView() {
        var (book, _) = Self.openBook()
        let actions = book.shutdown()
        guard case .terminate(Self.view, 147, let message)? = actions.first, actions.count == 1 else {
            Issue.record("\(actions)")
            return
        }
        #expect(message.contains("hauld stopped"))
        #expect(book.taskChanged(Self.task, Tasks.download()).isEmpty)
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
            destination: nil, path: "/", interface: nil, member: "Notify", body: note.arguments
        )
        #expect(notify.signature == "susssasa{sv}i")
    }

    @Test func aFailureSaysWhyAndEscapesMarkup() throws {
        let failed = Tasks.download("completed", error: "HTTP", message: "HTTP 404 <Not Found>", file: "/d/a&b.iso")
        let note = try #require(TransferNotification(before: Tasks.download("suspended"), after: failed))
        #expect(note.summary == "Download failed")
        #expect(note.body == "a&amp;b.iso: HTTP 404 &lt;Not Found&gt;")
        #expect(note.category == "transfer.error")
    }

    @Test func cancelsAndTasksSeenOnlyCompletedAreNotAnnounced() {
        let cancelled = Tasks.download("completed", error: "Cancelled", message: "cancelled")
        #expect(TransferNotification(before: Tasks.download(), after: cancelled) == nil)
        #expect(TransferNotification(before: Tasks.download("completed"), after: Tasks.download("completed")) == nil)
        #expect(TransferNotification(before: Tasks.download(), after: Tasks.download(bytes: 9)) == nil)
    }
}
