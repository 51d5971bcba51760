extension TransferScheduler {
    /// Brings the tasks in line with the conditions as of `now`, and says what changed.
    ///
    /// In order: back-offs that ran out are forgotten; running attempts a condition now forbids are stopped; free
    /// slots go to the ready tasks that may run, in admission order; the `WaitingFor` of every task that may have
    /// changed is published where it did (all of them when the conditions changed, else the `touched` ones and those
    /// this pass moved), in admission order; the timer follows the earliest back-off.
    mutating func reschedule(
        now: Instant, touched: [UInt32] = [], conditionsChanged: Bool = false, savingOrder: Bool = false
    ) -> [Action] {
        var changed = Set(touched)
        visits &+= UInt64(touched.count)
        expireBackOffs(now: now, into: &changed)

        var stops: [Action] = []
        let stoppable = conditionsChanged ? Array(transferring) : touched.filter { transferring.contains($0) }
        for id in inAdmissionOrder(stoppable) {
            visits &+= 1
            guard let task = tasks[id], let reason = blockingReason(task), Self.stopsRunningAttempts(reason) else {
                continue
            }
            setAttempt(id, .stopping)
            stops.append(.stopAttempt(id))
        }

        var starts: [Action] = []
        while maxRunningTasks == 0 || inFlight < Int(maxRunningTasks), let id = takeNextReady() {
            setAttempt(id, .running)
            changed.insert(id)
            starts.append(.startAttempt(id))
        }

        var published: [Action] = []
        let candidates = conditionsChanged ? Array(tasks.keys) : Array(changed)
        visits &+= UInt64(candidates.count)
        for id in inAdmissionOrder(candidates) {
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
        blockingReason(task.kind) ?? (task.retryDeadline == nil ? nil : .retry)
    }

    /// Why a task of `kind` may not start an attempt now, slots and back-offs aside.
    private func blockingReason(_ kind: Kind) -> WaitingFor? {
        if isPreparingForSleep { return .sleep }
        if !kind.isLoopback {
            if !networkState.allowsAttempts { return .network }
            if isMetered && !kind.allowMetered { return .unmetered }
            if isPowerSaver && kind.priority == .background { return .power }
        }
        return nil
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

    // MARK: - Keeping the heaps and counts

    /// Takes the ready task that comes first among the kinds the conditions let through, if any.
    private mutating func takeNextReady() -> UInt32? {
        var best: (kind: Kind, entry: ReadyEntry)?
        for kind in Array(ready.keys) where blockingReason(kind) == nil {
            guard let head = validHead(of: kind) else { continue }
            if best == nil || head.admission < best!.entry.admission { best = (kind, head) }
        }
        guard let best else { return nil }
        ready[best.kind]?.popMin()
        return best.entry.id
    }

    /// The first entry of `kind`'s heap that is still its task's own, dropping the stale ones above it.
    private mutating func validHead(of kind: Kind) -> ReadyEntry? {
        while let head = ready[kind]?.min {
            visits &+= 1
            if let task = tasks[head.id], task.isReady, task.readyStamp == head.stamp { return head }
            ready[kind]?.popMin()
        }
        return nil
    }

    /// Puts the task in its kind's heap when it is ready, as a new entry (any older one is stale from now on).
    mutating func enqueueIfReady(_ id: UInt32) {
        guard var task = tasks[id], task.isReady else { return }
        lastReadyStamp &+= 1
        task.readyStamp = lastReadyStamp
        tasks[id] = task
        let entry = ReadyEntry(admission: task.admission, id: id, stamp: task.readyStamp)
        let tasks = tasks
        ready[task.kind, default: BinaryHeap()].push(entry) { entry in
            guard let task = tasks[entry.id] else { return false }
            return task.isReady && task.readyStamp == entry.stamp
        }
    }

    /// Moves the task's attempt to `phase`, keeping the counts of attempts in flight and transferring.
    mutating func setAttempt(_ id: UInt32, _ phase: AttemptPhase) {
        guard let task = tasks[id], task.attempt != phase else { return }
        if task.attempt != .idle { inFlight -= 1 }
        if phase != .idle { inFlight += 1 }
        if task.attempt == .running {
            transferring.remove(id)
            if task.priority == .foreground { foregroundTransferring -= 1 }
        }
        if phase == .running {
            transferring.insert(id)
            if task.priority == .foreground { foregroundTransferring += 1 }
        }
        tasks[id]?.attempt = phase
    }

    /// Starts a back-off for the task, until `deadline`.
    mutating func setRetryDeadline(_ id: UInt32, _ deadline: Instant) {
        tasks[id]?.retryDeadline = deadline
        let tasks = tasks
        backOffs.push(BackOffEntry(deadline: deadline, id: id)) { entry in
            tasks[entry.id]?.retryDeadline == entry.deadline
        }
    }

    /// Forgets the back-offs that ran out by `now`: their tasks are ready again.
    private mutating func expireBackOffs(now: Instant, into changed: inout Set<UInt32>) {
        while let earliest = backOffs.min, earliest.deadline <= now {
            visits &+= 1
            backOffs.popMin()
            guard tasks[earliest.id]?.retryDeadline == earliest.deadline else { continue }
            tasks[earliest.id]?.retryDeadline = nil
            enqueueIfReady(earliest.id)
            changed.insert(earliest.id)
        }
    }

    /// The earliest back-off still running, dropping the forgotten ones above it.
    private mutating func earliestBackOff() -> Instant? {
        while let earliest = backOffs.min {
            visits &+= 1
            if tasks[earliest.id]?.retryDeadline == earliest.deadline { return earliest.deadline }
            backOffs.popMin()
        }
        return nil
    }

    /// Arms the timer for the earliest back-off still running, or cancels it when none is left.
    private mutating func followEarliestRetry() -> [Action] {
        switch (timer, earliestBackOff()) {
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
