import FoundationEssentials
import HaulCore
import HaulTransfer
import Logging

/// Attempts: run off the actor by the `AttemptRunner`; what they report goes back to the queue.
extension TaskService {
    /// Every start is answered by exactly one `attemptEnded` (the queue relies on it).
    func startAttempt(_ id: UInt32) {
        guard !isShuttingDown, let task = tasks[id] else { return }
        let record = task.record
        let reports = AttemptReports(
            progress: task.probe, plans: PlanBox(),
            name: { [self] contentDisposition, finalURL in
                await self.nameFile(id, contentDisposition: contentDisposition, finalURL: finalURL)
            },
            head: { [self] head in await self.headReceived(id, head) }
        )
        tasks[id]?.plans = reports.plans
        tasks[id]?.meter = ProgressMeter()
        tasks[id]?.nextPlanSave = nil
        // The service outlives its attempts (shutdown waits for them), so they hold it strongly.
        tasks[id]?.attempt = Task { [self, attempts, partialFiles] in
            // A removal or emptying asked before (a cancel, a restart from zero) is done before the attempt begins.
            await partialFiles.done()
            let result = await attempts.run(record, reports: reports)
            self.attemptEnded(id, result, stopped: Task.isCancelled)
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

    private func attemptEnded(_ id: UInt32, _ result: AttemptResult, stopped: Bool) {
        guard var task = tasks[id] else { return }
        let plan = task.plans.takeNew()
        if let plan { task.record.segments = plan }
        // While shutting down only a success is recorded (its file is in place); anything else stays restorable,
        // with the plan its connections left last, so that the next start continues where they stopped.
        if isShuttingDown, !result.isSuccess {
            tasks[id] = task
            if plan != nil { persist(id) }
            return
        }
        task.attempt = nil
        let end: TaskQueue.AttemptEnd
        switch result {
        case .downloaded(let size):
            task.record.segments = nil
            let expected = task.record.expectedTotal < 0 ? Int64(clamping: size) : task.record.expectedTotal
            task.probe.set(bytes: size, expected: expected)
            end = .succeeded
        case .uploaded(let status):
            task.record.httpStatus = status
            end = .succeeded
        case .failed(let failure) where stopped || failure == .cancelled,
            .mustRestartOnOneConnection(let failure) where stopped:
            end = .stopped
        case .failed(let failure):
            if let status = failure.httpStatus { task.record.httpStatus = status }
            logger.info("task \(id) attempt failed: \(failure)")
            end = .failed(failure)
        case .mustRestartOnOneConnection(let failure):
            // The file changed (or its ranges came without a size): from zero, on one connection.
            if let status = failure.httpStatus { task.record.httpStatus = status }
            task.record.segments = nil
            task.record.singleConnection = true
            partialFiles.empty(task.partialPath)
            task.probe.set(bytes: 0)
            logger.info("task \(id) attempt failed: \(failure)")
            end = .failed(failure)
        }
        tasks[id] = task
        perform(queue.attemptEnded(id, end, now: clock.now))
    }
}

extension AttemptResult {
    var isSuccess: Bool {
        switch self {
        case .downloaded, .uploaded: true
        case .failed, .mustRestartOnOneConnection: false
        }
    }
}
