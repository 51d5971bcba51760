import DBusKit
import HaulContract
import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct JobViewHintsTests {
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
        task.apply(TaskProperty.values([.downloadProgress: .double(progress)]))
        #expect((0...100).contains(task.percent ?? 999))
    }

    /// A queued task's job says why it waits; once it runs, the message is cleared.
    @Test func aQueuedTaskSaysWhyItWaits() {
        #expect(JobViewHints.update(for: Tasks.queued(.unmetered))["infoMessage"]
            == .string("Waiting for a network that is not metered"))
        #expect(JobViewHints.update(for: Tasks.queued(.slot))["speed"] == .uint64(0))
        #expect(JobViewHints.update(for: Tasks.download())["infoMessage"] == .string(""))
        for reason in WaitingForName.allCases {
            #expect(WaitingReason.sentence(for: Tasks.queued(reason)) != nil, "\(reason)")
        }
        #expect(WaitingReason.sentence(for: Tasks.download()) == nil)
    }

    @Test func aSuspendedTaskHasNoSpeed() {
        let hints = JobViewHints.update(for: Tasks.download(.suspended, bytes: 250, expected: 1000, rate: 42))
        #expect(hints["suspended"] == .boolean(true))
        #expect(hints["speed"] == .uint64(0))
    }

    @Test func theRequestNamesTheApplicationAndOffersTheButtonsTheTaskAllows() {
        let task = Tasks.download(bytes: 1, expected: 2)
        #expect(JobViewHints.capabilities(of: task) == 3)
        #expect(JobViewHints.capabilities(of: Tasks.download(.completed)) == 0)
        let hints = JobViewHints.request(for: task)
        #expect(hints["application-display-name"] == .string("Haul"))
        #expect(hints["application-icon-name"] == .string("haul"), "Haul's own icon")
        #expect(hints["title"] == .string("Downloading debian.iso"))
    }

    @Test(arguments: [
        (HaulErrorName?.none, UInt32(0)), (.cancelled, 1), (.network, 123), (.timeout, 149), (.diskFull, 161),
        (.permissionDenied, 116), (.fileExists, 112), (.http, 111), (.checksumMismatch, 163),
    ])
    func completedTasksTerminateWithTheirKIOCode(_ error: HaulErrorName?, _ code: UInt32) {
        let task = Tasks.download(.completed, error: error, message: error == nil ? "" : "it went wrong")
        let termination = JobViewHints.termination(for: task)
        #expect(termination.errorCode == code)
        #expect(termination.errorMessage == (error == nil ? "" : "it went wrong"))
    }

    @Test func aTaskThatVanishedUnfinishedIsAborted() {
        #expect(JobViewHints.termination(for: nil).errorCode == 147)
        #expect(JobViewHints.termination(for: Tasks.download()).errorCode == 147)
    }
}
