import DBusKit
import FoundationEssentials
import Glibc
import HaulCore
import HaulTransfer
import Logging

/// Attempts: one HTTP request each, run off the actor; their results go back to the task's lifecycle machine.
extension TaskService {
    /// Every start is answered by exactly one `attemptEnded` (the machine relies on it).
    func startAttempt(_ id: UInt32) {
        guard !isShuttingDown, let task = tasks[id] else { return }
        let record = task.record
        let probe = task.probe
        let client = client
        let plans = PlanBox()
        tasks[id]?.plans = plans
        tasks[id]?.meter = ProgressMeter()
        let heads = HeadDelivery()
        // The service outlives its attempts (shutdown waits for them), so they hold it strongly.
        tasks[id]?.attempt = Task { [self] in
            let result: Result<UInt32?, TransferFailure>
            do throws(TransferFailure) {
                switch record.kind {
                case .download:
                    try await Self.download(record, probe: probe, plans: plans, client: client) { head in
                        heads.send { await self.headReceived(id, head) }
                    }
                    result = .success(nil)
                case .upload:
                    result = .success(try await Self.upload(record, probe: probe, client: client))
                }
            } catch {
                result = .failure(error)
            }
            await heads.delivered()
            self.attemptEnded(id, result, stopped: Task.isCancelled)
        }
    }

    private static func download(
        _ record: TaskRecord, probe: ProgressProbe, plans: PlanBox, client: TransferClient,
        onHead: @escaping @Sendable (DownloadHead) -> Void
    ) async throws(TransferFailure) {
        let url = try transferURL(record)
        let partial = DownloadCompletion.partialPath(for: record.path)
        if usesSegments(record) {
            // A plan that does not fit the file as the server last described it starts from zero. Without a plan, what
            // one connection appended so far is the first segment's start (Connections raised mid-way).
            let appended = record.validator?.ifRangeValue == nil || record.expectedTotal <= 0
                ? nil : SegmentPlan(total: record.expectedTotal, done: Int64(DownloadCompletion.size(of: partial)))
            let plan = record.segments.map { SegmentPlan.restored($0, total: record.expectedTotal) } ?? appended
            probe.set(bytes: UInt64(max(plan?.bytesDone ?? 0, 0)), expected: record.expectedTotal)
            _ = try await client.download(
                url: url, partialPath: partial, connections: Int(record.connections), plan: plan,
                validator: plan == nil ? nil : record.validator, headers: record.headers, onHead: onHead,
                onProgress: { probe.set(bytes: $0) }, onPlan: { plans.post($0) }
            )
        } else {
            // Without a validator usable in If-Range, a 206 could splice two versions of the resource: start from zero.
            let offset = record.validator?.ifRangeValue == nil ? 0 : Int64(DownloadCompletion.size(of: partial))
            probe.set(bytes: UInt64(offset), expected: record.expectedTotal)
            _ = try await client.download(
                url: url, partialPath: partial, offset: offset, validator: record.validator, headers: record.headers,
                onHead: onHead, onProgress: { probe.set(bytes: $0) }
            )
        }
        if Task.isCancelled { throw .cancelled }
        if let expected = record.sha256 { try await DownloadCompletion.verifyOffLoop(partial, sha256: expected) }
        // Hashing a large file takes a while: a Suspend or SIGTERM meanwhile leaves the file where it is.
        if Task.isCancelled { throw .cancelled }
        try DownloadCompletion.place(destination: record.path, overwrite: record.overwrite)
    }

    private static func upload(_ record: TaskRecord, probe: ProgressProbe, client: TransferClient)
        async throws(TransferFailure) -> UInt32
    {
        let url = try transferURL(record)
        probe.set(bytes: 0, expected: Int64(DownloadCompletion.size(of: record.path)))
        let status = try await client.upload(
            url: url, path: record.path, method: record.method, headers: record.headers,
            onProgress: { probe.set(bytes: $0, expected: $1) }
        )
        return UInt32(clamping: status)
    }

    /// Whether a download goes through the segmented engine: it may use several connections, or it has a plan on
    /// disk (its partial file has holes that only the plan knows). Not after the file changed under it.
    static func usesSegments(_ record: TaskRecord) -> Bool {
        record.kind == .download && !record.singleConnection && (record.connections > 1 || record.segments != nil)
    }

    private static func transferURL(_ record: TaskRecord) throws(TransferFailure) -> URL {
        do {
            return try TransferURL(record.url).url
        } catch {
            throw TransferFailure(kind: .invalidArgument, message: error.description, isTransient: false)
        }
    }

    /// A response head: what the server says about resuming, saved at once so a crash can resume too. It is
    /// published with the next progress tick, within 100 ms, keeping to ten updates a second.
    private func headReceived(_ id: UInt32, _ head: DownloadHead) {
        guard var task = tasks[id] else { return }
        // A 206 continues the representation the validator names (and may omit Last-Modified): keep it.
        if head.offset == 0 {
            let validator = ResumeValidator(headers: head.headers)
            task.record.validator = validator.etag == nil && validator.lastModified == nil ? nil : validator
        }
        task.record.resumable = HTTPResume.isResumable(status: head.status, headers: head.headers)
        task.record.httpStatus = UInt32(clamping: head.status)
        task.record.expectedTotal = head.expectedTotal ?? -1
        task.probe.set(bytes: UInt64(head.offset), expected: task.record.expectedTotal)
        tasks[id] = task
        persist(id)
    }

    private func attemptEnded(_ id: UInt32, _ result: Result<UInt32?, TransferFailure>, stopped: Bool) {
        // While shutting down only a success is recorded (its file is in place); anything else stays restorable.
        if isShuttingDown, case .failure = result { return }
        guard var task = tasks[id] else { return }
        task.attempt = nil
        if let plan = task.plans.takeNew() { task.record.segments = plan }
        let now = clock.now
        let actions: [ManagedTask.Machine.Action]
        // Unless it was stopped, its connection may wait in the client's pool (`PooledConnectionTrim`).
        let mayHavePooledConnection: Bool
        switch result {
        case .success(let status):
            mayHavePooledConnection = true
            if let status { task.record.httpStatus = status }
            if task.record.kind == .download {
                task.record.segments = nil
                let size = DownloadCompletion.size(of: task.record.path)
                task.probe.set(bytes: size, expected: task.record.expectedTotal < 0 ? Int64(size) : task.record.expectedTotal)
            }
            actions = task.machine.transferSucceeded(now: now)
        case .failure(let failure) where stopped || failure == .cancelled:
            mayHavePooledConnection = false
            actions = task.machine.transferStopped(now: now)
        case .failure(let failure):
            mayHavePooledConnection = true
            if let status = failure.httpStatus { task.record.httpStatus = status }
            if TransferClient.needsOneConnection(failure) {
                // The file changed (or its ranges came without a size): from zero, on one connection.
                task.record.segments = nil
                task.record.singleConnection = true
                truncate(task.partialPath, 0)
                task.probe.set(bytes: 0)
            }
            logger.info("task \(id) attempt \(task.machine.attempt) failed: \(failure)")
            actions = task.machine.transferFailed(failure, now: now)
        }
        tasks[id] = task
        perform(actions, for: id)
        if mayHavePooledConnection { outboxInput.yield(.connectionReleased) }
    }
}
