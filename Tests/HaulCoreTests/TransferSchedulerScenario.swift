import HaulCore

typealias Scheduler = TransferScheduler<TestInstant>

extension TransferScheduler where Instant == TestInstant {
    /// Adds task `id` at `now` (0 ms by default): foreground, not loopback, wanting to run, and allowed on a metered
    /// network as its priority's default says unless `allowMetered` says otherwise.
    @discardableResult
    mutating func add(
        _ id: UInt32,
        _ priority: TransferPriority = .foreground,
        allowMetered: Bool? = nil,
        loopback: Bool = false,
        suspended: Bool = false,
        at now: TestInstant = ms(0)
    ) -> [Action] {
        add(
            id, priority: priority, allowMetered: allowMetered ?? priority.allowsMeteredByDefault,
            isLoopback: loopback, isSuspended: suspended, now: now
        )
    }

    /// A scheduler with `MaxRunningTasks` = `max` and tasks 1…`count` added in order at 0 ms (foreground).
    static func with(max: UInt32, tasks count: UInt32) -> Scheduler {
        var scheduler = Scheduler(maxRunningTasks: max)
        for id in 1..<count + 1 {
            scheduler.add(id)
        }
        return scheduler
    }

    /// Every task's `WaitingFor`, by id; nil for a running or suspended task.
    var reasons: [UInt32: WaitingFor?] {
        Dictionary(uniqueKeysWithValues: queueOrder.map { ($0, waitingFor($0)) })
    }
}

/// The ids of the tasks `actions` start, in order.
func started(_ actions: [Scheduler.Action]) -> [UInt32] {
    actions.compactMap { if case .startAttempt(let id) = $0 { id } else { nil } }
}

/// The ids of the tasks `actions` stop, in order.
func stopped(_ actions: [Scheduler.Action]) -> [UInt32] {
    actions.compactMap { if case .stopAttempt(let id) = $0 { id } else { nil } }
}

/// The `WaitingFor` changes `actions` publish, in order.
func publishedReasons(_ actions: [Scheduler.Action]) -> [(UInt32, WaitingFor?)] {
    actions.compactMap { if case .publishWaitingFor(let id, let reason) = $0 { (id, reason) } else { nil } }
}
