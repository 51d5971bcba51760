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
    /// When the progress tick may save the attempt's next plan (`TaskService.planSaveInterval`, or
    /// `limitedPlanSaveInterval`); nil until it saved the first, which it saves at once.
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

    /// Every property of `org.haul.Haul1.Task` by name, with its lifecycle as `entry` has it and its state as clients
    /// see it: what the task is exported with.
    func properties(_ entry: TaskQueue.Entry, _ shown: TaskQueue.PublicState) -> [String: DBusValue] {
        Dictionary(uniqueKeysWithValues: zip(TaskProperty.allCases.map(\.rawValue), propertyValues(entry, shown)))
    }

    /// The same values in the contract's order (`TaskProperty.allCases`), as the object server's
    /// `updateAllProperties` takes them: a publication hashes no name.
    func propertyValues(_ entry: TaskQueue.Entry, _ shown: TaskQueue.PublicState, rate: UInt64 = 0) -> [DBusValue] {
        let reading = probe.reading
        let download = record.kind == .download
        let machine = entry.lifecycle
        let failure = machine.outcome?.failure
        return TaskProperty.allCases.map { property -> DBusValue in
            switch property {
            case .id: .uint32(record.id)
            case .kind: .string(TaskKindName(record.kind).rawValue)
            case .url: .string(TransferURL.redacted(record.url).busSafe)
            case .path: .string(record.path)
            case .state: .string(TaskStateName(shown).rawValue)
            case .bytesReceived: .uint64(download ? reading.bytes : 0)
            case .bytesExpectedToReceive: .int64(download ? reading.expected : -1)
            case .bytesSent: .uint64(download ? 0 : reading.bytes)
            case .bytesExpectedToSend: .int64(download ? 0 : reading.expected)
            case .downloadProgress: .double(download ? progress(reading) : 0)
            case .uploadProgress: .double(download ? 0 : progress(reading))
            case .rate: .uint64(rate)
            case .cancellable: .boolean(machine.isCancellable)
            case .pausable: .boolean(machine.isPausable)
            case .resumable: .boolean(download && record.resumable)
            case .errorName: .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? "")
            // A suspended task may say why hauld suspended it; ErrorName stays empty, as it has not failed.
            case .errorMessage: .string((failure?.message ?? entry.crashLoop.notice ?? "").busSafe)
            case .httpStatus: .uint32(record.httpStatus)
            case .connections: .uint32(record.connections)
            case .rateLimit: .uint64(record.rateLimit)
            case .waitingFor: .string(WaitingForName.value(shown.waitingFor))
            case .priority: .string(TaskPriorityName(record.priority).rawValue)
            case .allowMetered: .boolean(record.allowMetered)
            case .application: .string(record.application.busSafe)
            }
        }
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
