import DBusKit
package import HaulCore
import HaulTransfer

/// One transfer as the service holds it: its persisted record, its lifecycle machine and what runs for it.
struct ManagedTask {
    typealias Machine = TransferTaskStateMachine<ContinuousClock.Instant>

    var record: TaskRecord
    var machine: Machine
    let path: ObjectPath
    let probe = ProgressProbe()
    var meter = ProgressMeter<ContinuousClock.Instant>()
    var attempt: Task<Void, Never>?
    var retryTimer: Task<Void, Never>?
    /// Where a segmented download's attempt leaves its plan.
    var plans = PlanBox()

    init(record: TaskRecord, machine: Machine) {
        self.record = record
        self.machine = machine
        path = HaulBus.tasksPath.appending(String(record.id)) ?? HaulBus.tasksPath
    }

    var partialPath: String { DownloadCompletion.partialPath(for: record.path) }

    /// Copies what the record keeps of the lifecycle from the machine; returns whether that changed anything.
    @discardableResult
    mutating func recordLifecycle() -> Bool {
        let before = record
        record.state = machine.state
        record.outcome = machine.outcome
        record.interruptedRuns = machine.interruptedRuns
        record.notice = machine.notice
        return record != before
    }

    /// Bytes of a download already on disk: in the partial file, or the finished file.
    var bytesOnDisk: UInt64 {
        if record.state == .completed, record.outcome == .success { return DownloadCompletion.size(of: record.path) }
        // A segmented download's partial file has its full size from the start: the plan says what is in it.
        if let segments = record.segments { return UInt64(max(segments.bytesDone, 0)) }
        return DownloadCompletion.size(of: partialPath)
    }

    /// Every property of `org.haul.Haul1.Task`.
    func properties(rate: UInt64 = 0) -> [String: DBusValue] {
        let reading = probe.reading
        let download = record.kind == .download
        let failure = machine.outcome?.failure
        return [
            "Id": .uint32(record.id),
            "Kind": .string(record.kind.rawValue),
            "URL": .string(TransferURL.redacted(record.url).busSafe),
            "Path": .string(record.path),
            "State": .string(machine.state.rawValue),
            "BytesReceived": .uint64(download ? reading.bytes : 0),
            "BytesExpectedToReceive": .int64(download ? reading.expected : -1),
            "BytesSent": .uint64(download ? 0 : reading.bytes),
            "BytesExpectedToSend": .int64(download ? 0 : reading.expected),
            "DownloadProgress": .double(download ? progress(reading) : 0),
            "UploadProgress": .double(download ? 0 : progress(reading)),
            "Rate": .uint64(rate),
            "Cancellable": .boolean(machine.isCancellable),
            "Pausable": .boolean(machine.isPausable),
            "Resumable": .boolean(download && record.resumable),
            "ErrorName": .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? ""),
            // A suspended task may say why hauld suspended it; ErrorName stays empty, as it has not failed.
            "ErrorMessage": .string((failure?.message ?? machine.notice ?? "").busSafe),
            "HTTPStatus": .uint32(record.httpStatus),
            "Connections": .uint32(record.connections),
        ]
    }

    private func progress(_ reading: ProgressProbe.Reading) -> Double {
        if record.state == .completed, record.outcome == .success { return 1 }
        return ProgressMeter<ContinuousClock.Instant>.fraction(done: reading.bytes, expected: reading.expected)
    }
}

extension HaulErrorName {
    /// The contract's error for a transfer failure. Every kind is one (a test holds them together); `Network`
    /// stands in should a new kind ever be added to the core alone.
    package init(_ kind: TransferErrorKind) {
        self = HaulErrorName(rawValue: kind.rawValue) ?? .network
    }

    /// `org.haul.Haul1.Error.<Kind>` for a transfer failure.
    static func fullName(of kind: TransferErrorKind) -> String { HaulErrorName(kind).fullName }

    /// Runs `body`, answering a failure as the bus error of its kind: where the core's refusals become the
    /// contract's errors.
    static func mapping<T>(_ body: () throws(TransferFailure) -> T) throws(DBusError) -> T {
        do {
            return try body()
        } catch {
            throw HaulErrorName(error.kind).error(error.message)
        }
    }
}

extension String {
    /// The string as a D-Bus string can carry it: a NUL byte, which no D-Bus string may hold (a reply or signal with
    /// one cannot be sent at all), becomes U+FFFD. For text that may come from a server or a record on disk.
    var busSafe: String { utf8.contains(0) ? replacing("\u{0}", with: "\u{FFFD}") : self }
}
