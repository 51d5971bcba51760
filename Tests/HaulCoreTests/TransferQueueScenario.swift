import HaulCore

typealias Queue = TransferQueue<TestInstant>
typealias QueueAction = Queue.Action

extension TransferQueue where Instant == TestInstant {
    /// Adds task `id` at `now` (0 ms by default): foreground, not loopback, running unless `suspended`.
    @discardableResult
    mutating func add(
        _ id: UInt32, _ priority: TransferPriority = .foreground, loopback: Bool = false, maxRetries: UInt32 = 5,
        suspended: Bool = false, at now: TestInstant = ms(0)
    ) -> [Action] {
        add(
            id, traits: Traits(priority: priority, isLoopback: loopback), maxRetries: maxRetries,
            startSuspended: suspended, now: now
        )
    }

    /// A queue with `MaxRunningTasks` = `max` and running tasks 1…`count` added in order at 0 ms.
    static func with(max: UInt32, tasks count: UInt32) -> Queue {
        var queue = Queue(maxRunningTasks: max)
        for id in 1..<count + 1 { queue.add(id) }
        return queue
    }

    /// What clients see of task `id`, in short: `running`, `queued:slot`, `suspended`, `completed`…
    func shown(_ id: UInt32) -> String {
        publicState(of: id)?.summary ?? "unknown"
    }
}

extension TransferQueue.PublicState {
    /// `running`, `queued:retry`, `suspended`, …
    var summary: String {
        if let waitingFor, state == .running { return "queued:\(waitingFor)" }
        return "\(state)"
    }
}

/// The attempts `actions` start, as (task, attempt number).
func startedAttempts(_ actions: [QueueAction]) -> [UInt32] {
    actions.compactMap { if case .startAttempt(let id, _) = $0 { id } else { nil } }
}

/// The states `actions` publish, as (task, summary).
func publishedStates(_ actions: [QueueAction]) -> [String] {
    actions.compactMap { if case .publishState(let id, let state) = $0 { "\(id) \(state.summary)" } else { nil } }
}

/// The signals `actions` send, as "resume 3", "suspend 3", "complete 3".
func signalsSent(_ actions: [QueueAction]) -> [String] {
    actions.compactMap { action in
        switch action {
        case .emitDidResume(let id): "resume \(id)"
        case .emitDidSuspend(let id): "suspend \(id)"
        case .emitDidComplete(let id, _): "complete \(id)"
        default: nil
        }
    }
}
