import DBusKit
import HaulContract
import HaulCore
import HaulTransfer

/// Every task's lifecycle and place in the queue, on the service's clock.
typealias TaskQueue = TransferQueue<ContinuousClock.Instant>

/// One transfer as the service holds it: its persisted record and what runs for it. Its lifecycle and place in the
/// queue are the `TransferQueue`'s.
struct ManagedTask {
    var record: TaskRecord
    let path: ObjectPath
    let probe = ProgressProbe()
    var meter = ProgressMeter<ContinuousClock.Instant>()
    var attempt: Task<Void, Never>?
    /// Where a segmented download's attempt leaves its plan.
    var plans = PlanBox()
    /// When the progress tick may save the attempt's next plan (`TaskService.planSaveInterval`); nil until it saved
    /// the first, which it saves at once.
    var nextPlanSave: ContinuousClock.Instant?

    init(record: TaskRecord) {
        self.record = record
        path = HaulBus.taskPath(record.id)
    }

    /// The download's partial file; none ("", which names no file) before a download into a folder is named.
    var partialPath: String { record.awaitsName ? "" : DownloadCompletion.partialPath(for: record.path) }

    /// Copies what the record keeps of the task's place in the queue: lifecycle, crash-loop guard, position.
    ///
    /// A task that succeeded never sends a request again: its headers (a browser's cookies among them) leave the
    /// record. A failed one keeps them until it is forgotten, for `Retry`.
    mutating func keep(_ entry: TaskQueue.Entry) {
        record.state = entry.lifecycle.state
        record.outcome = entry.lifecycle.outcome
        record.interruptedRuns = entry.crashLoop.interruptedRuns
        record.notice = entry.crashLoop.notice
        record.queuePosition = entry.queuePosition
        if record.outcome == .success { record.headers = [:] }
    }

    /// What the queue needs to know of the task.
    var traits: TaskQueue.Traits {
        TaskQueue.Traits(priority: record.priority, allowMetered: record.allowMetered, isLoopback: isLoopback)
    }

    /// Bytes of a download already on disk: in the partial file, or the finished file.
    var bytesOnDisk: UInt64 {
        if record.state == .completed, record.outcome == .success { return DownloadCompletion.size(of: record.path) }
        // A segmented download's partial file has its full size from the start: the plan says what is in it.
        if let segments = record.segments { return UInt64(max(segments.bytesDone, 0)) }
        return DownloadCompletion.size(of: partialPath)
    }

    /// Every property of `org.haul.Haul1.Task`, with its lifecycle as `entry` has it and its state as clients see it.
    func properties(_ entry: TaskQueue.Entry, _ shown: TaskQueue.PublicState, rate: UInt64 = 0) -> [String: DBusValue] {
        let reading = probe.reading
        let download = record.kind == .download
        let machine = entry.lifecycle
        let failure = machine.outcome?.failure
        let waitingFor = shown.waitingFor
        let properties: [TaskProperty: DBusValue] = [
            .id: .uint32(record.id),
            .kind: .string(TaskKindName(record.kind).rawValue),
            .url: .string(TransferURL.redacted(record.url).busSafe),
            .path: .string(record.path),
            .state: .string(TaskStateName(shown).rawValue),
            .bytesReceived: .uint64(download ? reading.bytes : 0),
            .bytesExpectedToReceive: .int64(download ? reading.expected : -1),
            .bytesSent: .uint64(download ? 0 : reading.bytes),
            .bytesExpectedToSend: .int64(download ? 0 : reading.expected),
            .downloadProgress: .double(download ? progress(reading) : 0),
            .uploadProgress: .double(download ? 0 : progress(reading)),
            .rate: .uint64(rate),
            .cancellable: .boolean(machine.isCancellable),
            .pausable: .boolean(machine.isPausable),
            .resumable: .boolean(download && record.resumable),
            .errorName: .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? ""),
            // A suspended task may say why hauld suspended it; ErrorName stays empty, as it has not failed.
            .errorMessage: .string((failure?.message ?? entry.crashLoop.notice ?? "").busSafe),
            .httpStatus: .uint32(record.httpStatus),
            .connections: .uint32(record.connections),
            .rateLimit: .uint64(record.rateLimit),
            .waitingFor: .string(WaitingForName.value(waitingFor)),
            .priority: .string(TaskPriorityName(record.priority).rawValue),
            .allowMetered: .boolean(record.allowMetered),
            .application: .string(record.application.busSafe),
        ]
        return properties.byName
    }

    private func progress(_ reading: ProgressProbe.Reading) -> Double {
        if record.state == .completed, record.outcome == .success { return 1 }
        return ProgressMeter<ContinuousClock.Instant>.fraction(done: reading.bytes, expected: reading.expected)
    }
}

extension String {
    /// The string as a D-Bus string can carry it: a NUL byte, which no D-Bus string may hold (a reply or signal with
    /// one cannot be sent at all), becomes U+FFFD. For text that may come from a server or a record on disk.
    var busSafe: String { utf8.contains(0) ? replacing("\u{0}", with: "\u{FFFD}") : self }
}
