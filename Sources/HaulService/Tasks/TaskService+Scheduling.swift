import DBusKit
import FoundationEssentials
import HaulContract
import HaulCore
import ServiceKit

/// The scheduler beside the lifecycle machines: a task's machine says when it wants an attempt (and keeps its retry
/// budget), `TransferScheduler` says when one may run. An attempt starts only on the scheduler's `startAttempt`; a
/// machine's own `startTransfer` only tells the scheduler that the task wants to run, and its retry back-off is waited
/// out by the scheduler (`WaitingFor=retry`) rather than by a timer of the machine.
extension TaskService {
    typealias Scheduler = TransferScheduler<ContinuousClock.Instant>

    /// Brings the scheduler in line with the task's lifecycle after its machine acted: a running task wants to run,
    /// a suspended one does not, a canceling or completed one leaves.
    func followLifecycle(_ id: UInt32) {
        guard let task = tasks[id] else { return }
        let now = clock.now
        let known = scheduler.task(id)
        switch task.machine.state {
        case .running:
            if known == nil {
                schedule(join(task, suspended: false), for: id)
            } else if known?.wantsToRun == false {
                schedule(scheduler.resume(id, now: now), for: id)
            }
        case .suspended:
            if known == nil {
                schedule(join(task, suspended: true), for: id)
            } else if known?.wantsToRun == true {
                schedule(scheduler.suspend(id, now: now), for: id)
            }
        case .canceling:
            if known != nil { schedule(scheduler.remove(id, now: now), for: id) }
        case .completed:
            schedule(scheduler.completed(id, now: now), for: id)
        }
    }

    /// The task joins the scheduler's queue, at its end.
    func join(_ task: ManagedTask, suspended: Bool) -> [Scheduler.Action] {
        scheduler.add(
            task.record.id, priority: task.record.priority, allowMetered: task.record.allowMetered,
            isLoopback: task.isLoopback, isSuspended: suspended, now: clock.now
        )
    }

    /// Carries out what the scheduler decided; `id` is the task the event was about.
    func schedule(_ actions: [Scheduler.Action], for id: UInt32? = nil) {
        for action in actions {
            switch action {
            case .startAttempt(let started):
                admit(started)
            case .stopAttempt(let stopped):
                // Its report (`attemptEnded`) frees the slot.
                tasks[stopped]?.attempt?.cancel()
            case .publishWaitingFor(let waiting, _):
                publishQueueState(waiting)
            case .armTimer(let deadline, let generation):
                schedulerTimer?.cancel()
                schedulerTimer = clock.timer(at: deadline) { [weak self] in
                    await self?.schedulerTimerFired(generation)
                }
            case .cancelTimer:
                schedulerTimer?.cancel()
                schedulerTimer = nil
            case .saveQueueOrder:
                if let id { takeQueuePosition(id) }
            }
        }
        publishRunningCount()
        followInhibitors()
    }

    /// The scheduler gave the task a slot: a task whose back-off ran out takes its next attempt from its machine,
    /// and a task whose machine wants an attempt gets one. Anything else hands the slot back at once.
    private func admit(_ id: UInt32) {
        guard var task = tasks[id] else { return }
        if let retry = task.pendingRetry {
            task.pendingRetry = nil
            let actions = task.machine.retryTimerFired(generation: retry.generation, now: clock.now)
            tasks[id] = task
            perform(actions, for: id)
        }
        guard let current = tasks[id], current.machine.state == .running, current.attempt == nil, !isShuttingDown
        else {
            schedule(scheduler.attemptStopped(id, now: clock.now), for: id)
            return
        }
        if let retry = current.pendingRetry {
            // A back-off the machine re-armed: the slot waits for it.
            let delay = clock.now.duration(to: retry.deadline)
            schedule(scheduler.attemptFailed(id, retryDelay: delay, now: clock.now), for: id)
            return
        }
        // Counted by the crash-loop guard from now on, and saved before the attempt starts.
        if var counted = tasks[id] {
            let actions = counted.machine.attemptLetThrough()
            tasks[id] = counted
            perform(actions, for: id)
        }
        publishQueueState(id)
        startAttempt(id)
    }

    /// The task joined the end of the queue (created, resumed, given another priority): its record keeps its place
    /// for the next start. Restored tasks join in their saved order and keep their numbers.
    private func takeQueuePosition(_ id: UInt32) {
        guard !isRestoring, tasks[id] != nil else { return }
        lastQueuePosition &+= 1
        tasks[id]?.record.queuePosition = lastQueuePosition
        persist(id)
    }

    /// A task's `Priority`: it joins the end of its new priority's queue; a running transfer goes on.
    func setPriority(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .string(let name) = value, let parsed = TaskPriorityName(rawValue: name) else {
            let names = TaskPriorityName.allCases.map(\.rawValue).joined(separator: " or ")
            throw .invalidArgs("\(TaskProperty.priority.name) must be \(names)")
        }
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard task.machine.state != .completed else {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
        let priority = TransferPriority(parsed)
        tasks[id]?.record.priority = priority
        persist(id)
        publish(id, TaskProperty.values([.priority: .string(parsed.rawValue)]))
        schedule(scheduler.priorityChanged(id, to: priority, now: clock.now), for: id)
        await published()
    }

    /// A task's `AllowMetered`: kept with the task, and applied at once (a running transfer on a metered network stops
    /// and waits; a waiting one continues).
    func setAllowMetered(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .boolean(let allowed) = value else {
            throw .invalidArgs("\(TaskProperty.allowMetered.name) must be a b")
        }
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard task.machine.state != .completed else {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
        tasks[id]?.record.allowMetered = allowed
        persist(id)
        publish(id, TaskProperty.values([.allowMetered: .boolean(allowed)]))
        schedule(scheduler.allowMeteredChanged(id, to: allowed, now: clock.now), for: id)
        await published()
    }

    /// `SetURL`: a suspended or queued task gets a new URL (an expired link); its bytes on disk stay, and the next
    /// attempt validates them with If-Range as any resume does, so a different file starts again from zero.
    func setURL(_ text: String, of id: UInt32) async throws(DBusError) {
        let url = try request { () throws(TransferRequestError) in try TransferURL(text) }
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        switch task.machine.state {
        case .completed:
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        case .canceling:
            throw HaulErrorName.taskNotSuspended.error("task \(id) is being cancelled")
        case .running where waitingFor(id) == nil || task.attempt != nil:
            throw HaulErrorName.taskNotSuspended.error("task \(id) is transferring; suspend it first")
        case .running, .suspended:
            break
        }
        tasks[id]?.record.url = url.url.absoluteString
        persist(id)
        publish(id, TaskProperty.values([.url: .string(TransferURL.redacted(url.url.absoluteString).busSafe)]))
        schedule(scheduler.urlChanged(id, isLoopback: url.isLoopback, now: clock.now), for: id)
        await published()
    }

    private func schedulerTimerFired(_ generation: UInt64) {
        schedule(scheduler.timerFired(generation: generation, now: clock.now))
    }

    /// `State` and `WaitingFor` of a task whose place in the queue changed.
    func publishQueueState(_ id: UInt32) {
        guard var task = tasks[id] else { return }
        let waiting = waitingFor(id)
        if waiting != nil, task.attempt == nil {
            // Held in the queue with nothing in flight: a crash now cuts no attempt short.
            let actions = task.machine.attemptHeldBack()
            tasks[id] = task
            perform(actions, for: id)
            guard let current = tasks[id] else { return }
            task = current
        }
        publish(id, TaskProperty.values([
            .state: .string(task.stateName(waitingFor: waiting).rawValue),
            .waitingFor: .string(WaitingForName.value(waiting)),
        ]))
    }

    /// Why the task waits, while its machine says it runs; nil otherwise.
    func waitingFor(_ id: UInt32) -> WaitingFor? {
        guard tasks[id]?.machine.state == .running else { return nil }
        return scheduler.waitingFor(id)
    }

    /// Whether an attempt of the task is transferring (not queued).
    func isTransferring(_ id: UInt32) -> Bool {
        scheduler.task(id)?.attempt == .running
    }

    /// Only transferring tasks count in the indicator's `ActivityCount`.
    func publishRunningCount() {
        let running = scheduler.runningTasks.count
        guard running != lastRunningCount else { return }
        lastRunningCount = running
        outboxInput.yield(.runningTasks(UInt32(clamping: running)))
        if running > 0 { startTicker() }
    }

    /// The Manager's `MaxRunningTasks`: raising it starts queued tasks at once; lowering it stops nothing.
    func setMaxRunningTasks(_ value: DBusValue) async throws(DBusError) {
        guard case .uint32(let limit) = value else {
            throw .invalidArgs("\(ManagerProperty.maxRunningTasks.name) must be a u (0: no limit)")
        }
        try changeSettings([.maxRunningTasks: .uint32(limit)]) { $0.maxRunningTasks = limit }
        schedule(scheduler.maxRunningTasksChanged(to: limit, now: clock.now))
        await published()
    }
}

extension ManagedTask {
    /// The bus's `State`: running as the machine says, unless the scheduler has it waiting.
    func stateName(waitingFor: WaitingFor?) -> TaskStateName {
        machine.state == .running && waitingFor != nil ? .queued : TaskStateName(machine.state)
    }

    /// Whether the task's URL is loopback: it never waits for the network.
    var isLoopback: Bool { (try? TransferURL(record.url))?.isLoopback ?? false }
}
