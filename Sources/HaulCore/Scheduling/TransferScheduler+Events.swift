extension TransferScheduler {
    // MARK: - Tasks

    /// A task joins the scheduler, at the end of the queue: a new one, or one restored after a restart (add them in
    /// the saved ``queueOrder``). `isSuspended` is true for a task its client has not resumed. Adding a task the
    /// scheduler already knows does nothing.
    package mutating func add(
        _ id: UInt32,
        priority: TransferPriority,
        allowMetered: Bool,
        isLoopback: Bool,
        isSuspended: Bool,
        now: Instant
    ) -> [Action] {
        guard tasks[id] == nil else { return [] }
        tasks[id] = ScheduledTask(
            priority: priority, allowMetered: allowMetered, isLoopback: isLoopback, wantsToRun: !isSuspended,
            attempt: .idle, retryDeadline: nil, waitingFor: nil, ticket: takeTicket()
        )
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id], savingOrder: true)
    }

    /// The client suspended the task: its attempt stops, and any back-off is forgotten (a resume starts afresh).
    package mutating func suspend(_ id: UInt32, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved, task.wantsToRun else { return [] }
        task.wantsToRun = false
        task.retryDeadline = nil
        tasks[id] = task
        let stop = requestStop(id)
        return stop + reschedule(now: now, touched: [id])
    }

    /// The client resumed the task: it joins the end of the queue.
    package mutating func resume(_ id: UInt32, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved, !task.wantsToRun else { return [] }
        task.wantsToRun = true
        task.ticket = takeTicket()
        tasks[id] = task
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id], savingOrder: true)
    }

    /// The task is cancelled or forgotten. An attempt in flight is stopped and keeps its slot until it reports
    /// having stopped; nothing more is published for the task.
    package mutating func remove(_ id: UInt32, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved else { return [] }
        guard task.attempt != .idle else {
            tasks[id] = nil
            return reschedule(now: now)
        }
        task.isRemoved = true
        task.wantsToRun = false
        task.retryDeadline = nil
        tasks[id] = task
        let stop = requestStop(id)
        return stop + reschedule(now: now)
    }

    /// The task completed (its attempt succeeded, or failed for good): it leaves the scheduler and frees its slot.
    package mutating func completed(_ id: UInt32, now: Instant) -> [Action] {
        guard tasks[id] != nil else { return [] }
        setAttempt(id, .idle)
        tasks[id] = nil
        return reschedule(now: now)
    }

    /// The client gave the task another priority: it joins the end of that priority's queue. Whether it may use a
    /// metered network does not change: `AllowMetered` takes its default from the priority at creation only.
    package mutating func priorityChanged(_ id: UInt32, to priority: TransferPriority, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved, task.priority != priority else { return [] }
        if task.attempt == .running { foregroundTransferring += priority == .foreground ? 1 : -1 }
        task.priority = priority
        task.ticket = takeTicket()
        tasks[id] = task
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id], savingOrder: true)
    }

    /// The client allowed or forbade the task a metered network (`AllowMetered`): on a metered network it starts, or
    /// its attempt stops and it waits (`unmetered`).
    package mutating func allowMeteredChanged(_ id: UInt32, to allowed: Bool, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved, task.allowMetered != allowed else { return [] }
        task.allowMetered = allowed
        tasks[id] = task
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id])
    }

    /// The task has a new URL (`SetURL`), whose host is or is not loopback.
    package mutating func urlChanged(_ id: UInt32, isLoopback: Bool, now: Instant) -> [Action] {
        guard var task = tasks[id], !task.isRemoved, task.isLoopback != isLoopback else { return [] }
        task.isLoopback = isLoopback
        tasks[id] = task
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id])
    }

    // MARK: - Attempts

    /// The task's attempt stopped, as asked by ``Action/stopAttempt(_:)``: its slot is free. An attempt that stops
    /// unasked is requeued as if it had failed without spending a retry.
    package mutating func attemptStopped(_ id: UInt32, now: Instant) -> [Action] {
        attemptEnded(id, retryDelay: nil, now: now)
    }

    /// The task's attempt failed and the task goes on: it waits `retryDelay` (`retry`), then competes for a slot
    /// again. Without a delay — a failure that spent no retry (``failureSpendsRetry(_:)``) — it is queued at once,
    /// and waits for whatever it lacks. A failure of an attempt asked to stop counts as its stop.
    package mutating func attemptFailed(_ id: UInt32, retryDelay: Duration?, now: Instant) -> [Action] {
        attemptEnded(id, retryDelay: retryDelay, now: now)
    }

    private mutating func attemptEnded(_ id: UInt32, retryDelay: Duration?, now: Instant) -> [Action] {
        guard let task = tasks[id], task.attempt != .idle else { return [] }
        setAttempt(id, .idle)
        if task.isRemoved {
            tasks[id] = nil
            return reschedule(now: now)
        }
        if task.attempt == .running, let retryDelay, retryDelay > .zero {
            setRetryDeadline(id, now.advanced(by: retryDelay))
        }
        enqueueIfReady(id)
        return reschedule(now: now, touched: [id])
    }

    // MARK: - Conditions

    /// `MaxRunningTasks` changed (0: no limit). Raising it starts waiting tasks; lowering it stops nothing.
    package mutating func maxRunningTasksChanged(to limit: UInt32, now: Instant) -> [Action] {
        maxRunningTasks = limit
        return reschedule(now: now)
    }

    /// NetworkManager's view changed (or it came or went: ``NetworkState/unknown``). Running attempts go on.
    package mutating func networkChanged(to state: NetworkState, now: Instant) -> [Action] {
        networkState = state
        return reschedule(now: now, conditionsChanged: true)
    }

    /// NetworkManager's view changed: its state and whether it is metered, taken in at once so that an attempt is
    /// never started for the one and stopped for the other in the same event.
    package mutating func networkChanged(to state: NetworkState, metered: Bool, now: Instant) -> [Action] {
        networkState = state
        isMetered = metered
        return reschedule(now: now, conditionsChanged: true)
    }

    /// The network became metered, or stopped being. Attempts of tasks that may not use it stop.
    package mutating func meteredChanged(to metered: Bool, now: Instant) -> [Action] {
        isMetered = metered
        return reschedule(now: now, conditionsChanged: true)
    }

    /// Power-saver mode was entered or left. Attempts of background tasks stop in it.
    package mutating func powerSaverChanged(to powerSaver: Bool, now: Instant) -> [Action] {
        isPowerSaver = powerSaver
        return reschedule(now: now, conditionsChanged: true)
    }

    /// logind's `PrepareForSleep`: with true every attempt stops and every task that wants to run waits `sleep`;
    /// with false they compete again at once. A network still down after the wake-up makes them wait `network`
    /// instead, and one that goes down just after costs no retry (``failureSpendsRetry(_:)``).
    package mutating func prepareForSleep(_ sleeping: Bool, now: Instant) -> [Action] {
        isPreparingForSleep = sleeping
        return reschedule(now: now, conditionsChanged: true)
    }

    /// The timer armed with `generation` fired.
    package mutating func timerFired(generation: UInt64, now: Instant) -> [Action] {
        guard let armed = timer, armed.generation == generation else { return [] }
        guard now >= armed.deadline else {
            let rearmed = ArmedTimer(deadline: armed.deadline, generation: nextGeneration())
            timer = rearmed
            return [.armTimer(deadline: rearmed.deadline, generation: rearmed.generation)]
        }
        timer = nil
        return reschedule(now: now)
    }

    // MARK: - Helpers

    private mutating func requestStop(_ id: UInt32) -> [Action] {
        guard tasks[id]?.attempt == .running else { return [] }
        setAttempt(id, .stopping)
        return [.stopAttempt(id)]
    }

    private mutating func takeTicket() -> UInt64 {
        // Wrapping is unreachable in practice (2^64 queue entries) and must never trap.
        lastTicket &+= 1
        return lastTicket
    }
}
