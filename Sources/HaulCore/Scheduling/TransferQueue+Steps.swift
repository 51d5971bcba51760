extension TransferQueue {
    /// What one event decided so far, sorted by kind of action; ``finish(_:)`` puts it in the owner's order.
    struct Step {
        var stops: [Action] = []
        var cleanup: [Action] = []
        private(set) var saved: [UInt32] = []
        private var savedSet: Set<UInt32> = []
        /// Tasks whose ``PublicState`` may have changed.
        private(set) var shown: [UInt32] = []
        private var shownSet: Set<UInt32> = []
        var signals: [Action] = []
        var starts: [Action] = []
        /// The last word on the timer.
        var timer: Action?

        mutating func persist(_ id: UInt32) {
            if savedSet.insert(id).inserted { saved.append(id) }
        }

        mutating func show(_ id: UInt32) {
            if shownSet.insert(id).inserted { shown.append(id) }
        }
    }

    /// Takes in what a task's lifecycle machine said.
    mutating func follow(_ actions: [Lifecycle.Action], of id: UInt32, now: Instant, into step: inout Step) {
        for action in actions {
            switch action {
            case .startTransfer(let attempt):
                entries[id]?.wantedAttempt = attempt
            case .stopTransfer:
                // An attempt in flight is stopped by the scheduler, told by `sync`; one only wanted stops at once.
                guard var entry = entries[id], !entry.hasAttemptInFlight else { continue }
                entry.wantedAttempt = nil
                let stopped = entry.lifecycle.transferStopped(now: now)
                entries[id] = entry
                follow(stopped, of: id, now: now, into: &step)
            case .waitToRetry(let deadline):
                entries[id]?.retryAt = deadline
            case .removePartialFile:
                step.cleanup.append(.removePartialFile(id))
            case .persist:
                step.persist(id)
            case .publishState:
                step.show(id)
            case .emitDidResume:
                step.signals.append(.emitDidResume(id))
            case .emitDidSuspend:
                step.signals.append(.emitDidSuspend(id))
            case .emitDidComplete(let outcome):
                step.signals.append(.emitDidComplete(id, outcome))
            }
        }
        // The guard's notice says why the owner suspended the task: it has had its say once the task runs or ends.
        if let entry = entries[id], entry.crashLoop.notice != nil, entry.lifecycle.state != .suspended {
            entries[id]?.crashLoop.clearNotice()
            step.persist(id)
        }
    }

    /// Brings the scheduler in line with the task's lifecycle: a running task wants to run, a suspended one does not,
    /// a canceling or completed one leaves. A task joining (or rejoining) the queue takes the next position, unless
    /// `keepingPosition` (a restored task).
    mutating func sync(_ id: UInt32, now: Instant, keepingPosition: Bool = false, into step: inout Step) {
        handle(schedulerFollowing(id, now: now), subject: keepingPosition ? nil : id, now: now, into: &step)
    }

    private mutating func schedulerFollowing(_ id: UInt32, now: Instant) -> [Scheduler.Action] {
        guard let entry = entries[id] else { return [] }
        let known = scheduler.task(id)
        switch entry.lifecycle.state {
        case .running:
            if known == nil { return join(id, entry, suspended: false, now: now) }
            return known?.wantsToRun == false ? scheduler.resume(id, now: now) : []
        case .suspended:
            if known == nil { return join(id, entry, suspended: true, now: now) }
            return known?.wantsToRun == true ? scheduler.suspend(id, now: now) : []
        case .canceling:
            return scheduler.remove(id, now: now)
        case .completed:
            return scheduler.completed(id, now: now)
        }
    }

    private mutating func join(_ id: UInt32, _ entry: Entry, suspended: Bool, now: Instant) -> [Scheduler.Action] {
        scheduler.add(
            id, priority: entry.traits.priority, allowMetered: entry.traits.allowMetered,
            isLoopback: entry.traits.isLoopback, isSuspended: suspended, now: now
        )
    }

    /// Carries out what the scheduler decided; `subject` is the task the event was about, which takes the next queue
    /// position when the scheduler says it joined the end of the queue.
    mutating func handle(_ actions: [Scheduler.Action], subject: UInt32?, now: Instant, into step: inout Step) {
        var pending = actions
        var next = 0
        while next < pending.count {
            let action = pending[next]
            next += 1
            switch action {
            case .startAttempt(let id):
                pending += admit(id, now: now, into: &step)
            case .stopAttempt(let id):
                step.stops.append(.stopAttempt(id))
            case .publishWaitingFor(let id, _):
                step.show(id)
            case .armTimer(let deadline, let generation):
                step.timer = .armTimer(deadline: deadline, generation: generation)
            case .cancelTimer:
                step.timer = .cancelTimer
            case .saveQueueOrder:
                guard let subject, entries[subject] != nil else { continue }
                lastQueuePosition &+= 1
                entries[subject]?.queuePosition = lastQueuePosition
                step.persist(subject)
            }
        }
    }

    /// The scheduler gave the task a slot: the attempt its lifecycle wants starts (after a back-off, the lifecycle's
    /// next one), counted by the crash-loop guard from now on. Returns what the scheduler says if the slot is handed
    /// back.
    private mutating func admit(_ id: UInt32, now: Instant, into step: inout Step) -> [Scheduler.Action] {
        guard var entry = entries[id] else { return scheduler.completed(id, now: now) }
        if entry.wantedAttempt == nil {
            let due = entry.lifecycle.retryDue(now: now)
            entries[id] = entry
            follow(due, of: id, now: now, into: &step)
            entry = entries[id] ?? entry
        }
        guard entry.lifecycle.state == .running else {
            // Nothing runs: the slot goes back, and the scheduler follows the lifecycle.
            return scheduler.attemptStopped(id, now: now) + schedulerFollowing(id, now: now)
        }
        let attempt = entry.wantedAttempt ?? max(entry.lifecycle.attempt, 1)
        entry.wantedAttempt = nil
        entry.hasAttemptInFlight = true
        let counted = entry.crashLoop.interruptedRuns
        entry.crashLoop.attemptStarted()
        entries[id] = entry
        if entry.crashLoop.interruptedRuns != counted { step.persist(id) }
        step.show(id)
        step.starts.append(.startAttempt(id, attempt: attempt))
        return []
    }

    /// The event's actions in the owner's order, each task's ``PublicState`` published once where it changed.
    mutating func finish(_ step: Step) -> [Action] {
        var actions = step.stops + step.cleanup + step.saved.map(Action.persist)
        for id in step.shown {
            guard let entry = entries[id] else { continue }
            let shown = publicState(id, entry)
            guard shown != entry.published else { continue }
            entries[id]?.published = shown
            actions.append(.publishState(id, shown))
        }
        actions += step.signals + step.starts
        if let timer = step.timer { actions.append(timer) }
        let running = scheduler.runningTaskCount
        if running != lastRunningCount {
            lastRunningCount = running
            actions.append(.runningCountChanged(running))
        }
        return actions
    }
}
