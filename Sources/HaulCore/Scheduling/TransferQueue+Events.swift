extension TransferQueue {
    // MARK: - Tasks

    /// A new task joins, at the end of the queue. Unless `startSuspended`, it runs at once (its first resume): an
    /// attempt starts if a slot is free, else it is queued. Its first ``PublicState`` is already the one this event
    /// decided (export it with ``publicState(of:)``): nothing is published for it here. Adding a task the queue holds
    /// does nothing.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func add(
        _ id: UInt32, traits: Traits, maxRetries: UInt32, retryPolicy: RetryPolicy = RetryPolicy(),
        startSuspended: Bool, now: Instant
    ) -> [Action] {
        guard entries[id] == nil else { return [] }
        var lifecycle = Lifecycle(maxRetries: maxRetries, retryPolicy: retryPolicy)
        let started = startSuspended ? [] : lifecycle.start(now: now)
        entries[id] = Entry(lifecycle: lifecycle, crashLoop: CrashLoopGuard(), traits: traits, queuePosition: 0)
        var step = Step()
        step.persist(id)
        follow(started, of: id, now: now, into: &step)
        sync(id, now: now, into: &step)
        let shown = publicState(of: id)
        entries[id]?.published = shown
        return finish(step)
    }

    /// A task loaded from disk joins, as it was; nothing starts until ``continueRestored(_:now:)``. The guard of a task
    /// that was running says whether it may continue: if not, it is restored suspended with the guard's notice (and
    /// saved when it continues). Its ``PublicState`` until then is the one to export.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func restore(
        _ id: UInt32, state: TransferTaskState, outcome: TransferOutcome?, crashLoop: CrashLoopGuard, traits: Traits,
        queuePosition: UInt64, maxRetries: UInt32, retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        guard entries[id] == nil else { return }
        var crashLoop = crashLoop
        var state = state
        if state == .running, !crashLoop.mayContinueRestored() {
            state = .suspended
            trippedAtRestore.insert(id)
        }
        // A notice explains a suspension only.
        if state != .suspended { crashLoop.clearNotice() }
        let lifecycle = Lifecycle(restoring: state, outcome: outcome, maxRetries: maxRetries, retryPolicy: retryPolicy)
        var entry = Entry(lifecycle: lifecycle, crashLoop: crashLoop, traits: traits, queuePosition: queuePosition)
        entry.published = publicState(id, entry)
        entries[id] = entry
        lastQueuePosition = max(lastQueuePosition, queuePosition)
    }

    /// The restored tasks in the order they rejoin the queue: their saved order (by position, then id).
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package func restoredOrder() -> [UInt32] {
        entries.map { ($0.key, $0.value.queuePosition) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map { $0.0 }
    }

    /// A restored task rejoins the queue (call it for each, in ``restoredOrder()``): a running one continues from its
    /// bytes on disk without any signal, a canceling one finishes its cancel, the others wait as they were. It keeps
    /// its place in the queue.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func continueRestored(_ id: UInt32, now: Instant) -> [Action] {
        guard var entry = entries[id] else { return [] }
        var step = Step()
        if trippedAtRestore.remove(id) != nil { step.persist(id) }
        let started = entry.lifecycle.start(now: now)
        entries[id] = entry
        follow(started, of: id, now: now, into: &step)
        sync(id, now: now, keepingPosition: true, into: &step)
        return finish(step)
    }

    /// Forgets a completed task; returns false (and forgets nothing) for any other.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func forget(_ id: UInt32) -> Bool {
        guard entries[id]?.lifecycle.state == .completed else { return false }
        entries[id] = nil
        return true
    }

    // MARK: - Client commands

    /// The client's `Suspend`. Throws ``TaskCommandError/taskCompleted`` on a completed task.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func suspend(_ id: UInt32, now: Instant) throws(TaskCommandError) -> [Action] {
        try command(id, now: now) { lifecycle throws(TaskCommandError) in try lifecycle.suspend(now: now) }
    }

    /// The client's `Resume`: a fresh run, at the end of the queue. Throws ``TaskCommandError/taskCompleted`` on a
    /// completed task.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func resume(_ id: UInt32, now: Instant) throws(TaskCommandError) -> [Action] {
        try command(id, now: now) { lifecycle throws(TaskCommandError) in try lifecycle.resume(now: now) }
    }

    /// The client's `Retry`: ``TransferTaskStateMachine/retry(now:)``, at the end of the queue.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func retry(_ id: UInt32, now: Instant) throws(TaskCommandError) -> [Action] {
        try command(id, now: now) { lifecycle throws(TaskCommandError) in try lifecycle.retry(now: now) }
    }

    /// The client's `Cancel`. Throws ``TaskCommandError/taskCompleted`` on a completed task.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func cancel(_ id: UInt32, now: Instant) throws(TaskCommandError) -> [Action] {
        try command(id, now: now) { lifecycle throws(TaskCommandError) in try lifecycle.cancel(now: now) }
    }

    private mutating func command(
        _ id: UInt32, now: Instant, _ change: (inout Lifecycle) throws(TaskCommandError) -> [Lifecycle.Action]
    ) throws(TaskCommandError) -> [Action] {
        guard var entry = entries[id] else { return [] }
        let actions = try change(&entry.lifecycle)
        entries[id] = entry
        var step = Step()
        follow(actions, of: id, now: now, into: &step)
        sync(id, now: now, into: &step)
        return finish(step)
    }

    // MARK: - A task's settings

    /// The client gave the task another priority: it joins the end of that priority's queue.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func priorityChanged(_ id: UInt32, to priority: TransferPriority, now: Instant) -> [Action] {
        guard entries[id] != nil else { return [] }
        entries[id]?.traits.priority = priority
        var step = Step()
        handle(scheduler.priorityChanged(id, to: priority, now: now), subject: id, now: now, into: &step)
        return finish(step)
    }

    /// The client allowed or forbade the task a metered network (`AllowMetered`).
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func allowMeteredChanged(_ id: UInt32, to allowed: Bool, now: Instant) -> [Action] {
        guard entries[id] != nil else { return [] }
        entries[id]?.traits.allowMetered = allowed
        var step = Step()
        handle(scheduler.allowMeteredChanged(id, to: allowed, now: now), subject: id, now: now, into: &step)
        return finish(step)
    }

    /// The task has a new URL (`SetURL`), whose host is or is not loopback.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func urlChanged(_ id: UInt32, isLoopback: Bool, now: Instant) -> [Action] {
        guard entries[id] != nil else { return [] }
        entries[id]?.traits.isLoopback = isLoopback
        var step = Step()
        handle(scheduler.urlChanged(id, isLoopback: isLoopback, now: now), subject: id, now: now, into: &step)
        return finish(step)
    }

    // MARK: - Attempts

    /// How an attempt ended.
    package enum AttemptEnd: Equatable, Sendable {
        /// The file is complete, verified and in place (download), or the server accepted the body (upload).
        case succeeded
        case failed(TransferFailure)
        /// It stopped, as asked by ``Action/stopAttempt(_:)`` (or ended cancelled without being asked).
        case stopped
    }

    /// The task's attempt ended. A failure the scheduler says spends no retry (the attempt was stopped for the
    /// conditions, or the network is down) sets the task back to wait, with its retry budget intact.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func attemptEnded(_ id: UInt32, _ end: AttemptEnd, now: Instant) -> [Action] {
        guard var entry = entries[id], entry.hasAttemptInFlight else { return [] }
        entry.hasAttemptInFlight = false
        var step = Step()
        if entry.crashLoop.interruptedRuns != 0 { step.persist(id) }
        entry.crashLoop.attemptEnded()
        let spendsRetry = scheduler.failureSpendsRetry(id)
        let actions: [Lifecycle.Action]
        switch end {
        case .succeeded:
            actions = entry.lifecycle.transferSucceeded(now: now)
        case .stopped:
            actions = spendsRetry
                ? entry.lifecycle.transferStopped(now: now) : entry.lifecycle.transferSetBack(now: now)
        case .failed(let failure) where failure.isTransient && !spendsRetry:
            actions = entry.lifecycle.transferSetBack(now: now)
        case .failed(let failure):
            actions = entry.lifecycle.transferFailed(failure, now: now)
        }
        entries[id] = entry
        follow(actions, of: id, now: now, into: &step)
        // The scheduler hears of the end: the slot is free, after the back-off the lifecycle asked for, if any.
        let retryDelay = entries[id]?.retryAt.map { now.duration(to: $0) }
        entries[id]?.retryAt = nil
        if entries[id]?.lifecycle.state == .completed {
            handle(scheduler.completed(id, now: now), subject: id, now: now, into: &step)
        } else {
            handle(scheduler.attemptFailed(id, retryDelay: retryDelay, now: now), subject: id, now: now, into: &step)
        }
        sync(id, now: now, into: &step)
        return finish(step)
    }

    // MARK: - Conditions and time

    /// `MaxRunningTasks` changed (0: no limit). Raising it starts waiting tasks; lowering it stops nothing.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func maxRunningTasksChanged(to limit: UInt32, now: Instant) -> [Action] {
        scheduling(now: now) { $0.maxRunningTasksChanged(to: limit, now: now) }
    }

    /// NetworkManager's view changed: its state and whether the connection is metered.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func networkChanged(to state: NetworkState, metered: Bool, now: Instant) -> [Action] {
        scheduling(now: now) { $0.networkChanged(to: state, metered: metered, now: now) }
    }

    /// Power-saver mode was entered or left.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func powerSaverChanged(to powerSaver: Bool, now: Instant) -> [Action] {
        scheduling(now: now) { $0.powerSaverChanged(to: powerSaver, now: now) }
    }

    /// logind's `PrepareForSleep`.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func prepareForSleep(_ sleeping: Bool, now: Instant) -> [Action] {
        scheduling(now: now) { $0.prepareForSleep(sleeping, now: now) }
    }

    /// The timer armed with `generation` fired.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func timerFired(generation: UInt64, now: Instant) -> [Action] {
        scheduling(now: now) { $0.timerFired(generation: generation, now: now) }
    }

    private mutating func scheduling(now: Instant, _ event: (inout Scheduler) -> [Scheduler.Action]) -> [Action] {
        var step = Step()
        handle(event(&scheduler), subject: nil, now: now, into: &step)
        return finish(step)
    }

    /// The owner stops cleanly, its attempts with it (they need not report): no run it made counts for the crash-loop
    /// guard any more. Save what it says.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package mutating func ownerStoppingCleanly() -> [Action] {
        var step = Step()
        for id in entries.keys.sorted() where entries[id]?.crashLoop.interruptedRuns != 0 {
            entries[id]?.crashLoop.ownerStoppingCleanly()
            step.persist(id)
        }
        return finish(step)
    }
}
