extension TransferScheduler {
    /// Brings every task in line with the conditions as of `now`, and says what changed.
    ///
    /// In order: back-offs that ran out are forgotten; running attempts a condition now forbids are stopped; free
    /// slots go to the tasks that may run, in admission order; every task's `WaitingFor` is published where it
    /// changed; the timer follows the earliest back-off.
    mutating func reschedule(now: Instant, savingOrder: Bool = false) -> [Action] {
        let order = admissionOrder
        for id in order {
            if let deadline = tasks[id]?.retryDeadline, deadline <= now {
                tasks[id]?.retryDeadline = nil
            }
        }

        var stops: [Action] = []
        for id in order {
            guard let task = tasks[id], task.attempt == .running,
                let reason = blockingReason(task), Self.stopsRunningAttempts(reason)
            else { continue }
            tasks[id]?.attempt = .stopping
            stops.append(.stopAttempt(id))
        }

        var starts: [Action] = []
        var occupied = UInt64(attemptsInFlight)
        for id in order {
            guard maxRunningTasks == 0 || occupied < UInt64(maxRunningTasks) else { break }
            guard let task = tasks[id], task.wantsToRun, task.attempt == .idle, blockingReason(task) == nil else {
                continue
            }
            tasks[id]?.attempt = .running
            occupied += 1
            starts.append(.startAttempt(id))
        }

        var published: [Action] = []
        for id in order {
            guard let task = tasks[id], !task.isRemoved else { continue }
            let reason = waitingFor(of: task)
            guard reason != task.waitingFor else { continue }
            tasks[id]?.waitingFor = reason
            published.append(.publishWaitingFor(id, reason))
        }

        return stops + published + starts + followEarliestRetry() + (savingOrder ? [.saveQueueOrder] : [])
    }

    /// Why `task` may not start an attempt now, slots aside: the first reason that applies, in precedence order.
    func blockingReason(_ task: ScheduledTask) -> WaitingFor? {
        if isPreparingForSleep { return .sleep }
        if !task.isLoopback {
            if !networkState.allowsAttempts { return .network }
            if isMetered && !task.allowMetered { return .unmetered }
            if isPowerSaver && task.priority == .background { return .power }
        }
        return task.retryDeadline == nil ? nil : .retry
    }

    /// What `task`'s `WaitingFor` is once slots are given: nothing unless it wants to run and has no attempt
    /// transferring. A stopping attempt that may go on once stopped waits for its own slot.
    private func waitingFor(of task: ScheduledTask) -> WaitingFor? {
        guard task.wantsToRun, task.attempt != .running else { return nil }
        return blockingReason(task) ?? .slot
    }

    /// The reasons that stop an attempt already transferring. Not `network`: a connectivity check can be wrong, and
    /// a transfer that still works should go on (one that does not fails by itself). Not `slot`: priorities and
    /// `MaxRunningTasks` order the queue, they never cut a transfer. `retry` cannot apply to a running attempt.
    private static func stopsRunningAttempts(_ reason: WaitingFor) -> Bool {
        switch reason {
        case .sleep, .unmetered, .power: true
        case .network, .retry, .slot: false
        }
    }

    /// Arms the timer for the earliest back-off still running, or cancels it when none is left.
    private mutating func followEarliestRetry() -> [Action] {
        let earliest = tasks.values.compactMap(\.retryDeadline).min()
        switch (timer, earliest) {
        case (nil, nil):
            return []
        case (.some, nil):
            timer = nil
            return [.cancelTimer]
        case (let armed, .some(let deadline)):
            guard armed?.deadline != deadline else { return [] }
            let next = ArmedTimer(deadline: deadline, generation: nextGeneration())
            timer = next
            return [.armTimer(deadline: next.deadline, generation: next.generation)]
        }
    }

    mutating func nextGeneration() -> UInt64 {
        // Wrapping is unreachable in practice (2^64 timers) and must never trap.
        lastGeneration &+= 1
        return lastGeneration
    }
}
