/// The lifecycle of one transfer task (NSURLSessionTask's states and AF's task notifications; its bus side is
/// `org.haul.Haul1.Task` in `dbus/org.haul.Haul1.xml`), as a sans-I/O state machine.
///
/// The machine never reads a clock, touches a file or talks to the network: every event carries `now`, and returns the
/// ``Action``s its owner must perform, in order. Its public ``state`` is the D-Bus `State`; inside `running` it tells
/// apart an attempt in flight from a wait before the next one (a task waiting to retry is still running).
///
/// The owner's side of the contract:
/// - a new task starts suspended (as an NSURLSessionTask); call ``start(now:)`` to run it, or leave it for the
///   client's first `Resume` when it was created with `start-suspended`. Either way its first start is a resume
///   (``Action/emitDidResume``), as in AF;
/// - call ``start(now:)`` once for a task restored with
///   ``init(restoring:outcome:interruptedRuns:notice:maxRetries:retryPolicy:)``, after saving its record: a running
///   one continues from its bytes on disk without any signal (for its clients it never stopped), a canceling one
///   finishes its cancel, the others stay as they are;
/// - when it stops cleanly, call ``ownerStoppingCleanly()`` for every task and save what it says;
/// - every ``Action/startTransfer(attempt:)`` is answered by exactly one of ``transferSucceeded(now:)``,
///   ``transferFailed(_:now:)`` or — only after a ``Action/stopTransfer`` — ``transferStopped(now:)``. A transfer
///   asked to stop may still report that it finished first; the machine never starts a transfer before the previous
///   one has reported, so two never write the same partial file;
/// - at most one retry timer is armed; one that fires with a generation other than the last armed is stale and
///   ignored, so a timer the owner could not cancel in time does no harm.
///
/// Decisions made here, which the contract does not spell out:
/// - a client's `Resume` starts a fresh run: the attempt count and so the retry budget start again at 1, and a task
///   suspended while waiting to retry restarts at once;
/// - a transfer that reports success after a stop request wins: the file is complete and in place, so the task
///   completes successfully even though it was being suspended or cancelled;
/// - a failure reported while suspended completes the task if it is permanent (resuming could not help); a transient
///   one is dropped, since the next `Resume` starts a fresh attempt anyway. A failure while canceling completes the
///   cancel;
/// - cancelling a task with nothing in flight (suspended, waiting to retry, not started) completes it at once, without
///   passing through `canceling`; `Suspend` and `Resume` of a canceling task do nothing (a cancel cannot be undone);
/// - a task that completes with a failure, cancellation included, can never resume: its partial file is removed.
///
/// The crash-loop guard: ``interruptedRuns`` counts the unclean exits of the owner (a crash, SIGKILL) in a row that
/// cut an attempt of this task short. It goes up by one when a run of the owner starts an attempt, and back to 0 when
/// an attempt ends by itself or the owner stops cleanly (``ownerStoppingCleanly()``), so a record read after a crash
/// tells how many runs in a row died with the attempt in flight. (The count of a restored task goes up when it is
/// restored, so the owner saves it before the attempt starts; at a later start it is saved along with the attempt's
/// start, so a crash within milliseconds of a retry may be counted one run late.) A task restored running after
/// ``interruptedRunLimit`` of them is restored suspended, with a ``notice`` saying so, instead of being started a
/// third time: whatever in it brought the owner down (a bug reached through a URL, a redirect, a server's answer)
/// cannot keep it in a crash loop. A `Resume` starts it again.
///
/// Each of ``Action/publishState(_:)``, ``Action/emitDidResume``, ``Action/emitDidSuspend`` and
/// ``Action/emitDidComplete(_:)`` is emitted exactly once per real change, and ``Action/persist`` once whenever what
/// a ``TaskRecord`` keeps of the lifecycle (``state``, ``outcome``, ``interruptedRuns`` and ``notice``) changed.
package struct TransferTaskStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the owner must do after an event, in the order given.
    package enum Action: Equatable, Sendable {
        /// Start transfer attempt number `attempt` (1 for the first of a run), continuing from the bytes on disk
        /// where the server allows it.
        case startTransfer(attempt: Int)
        /// Stop the transfer in flight promptly (nothing more written, the socket no longer read), then report
        /// ``TransferTaskStateMachine/transferStopped(now:)``.
        case stopTransfer
        /// Schedule the retry timer for `deadline`, and report it with
        /// ``TransferTaskStateMachine/retryTimerFired(generation:now:)`` and this `generation`.
        case armRetryTimer(deadline: Instant, generation: UInt64)
        /// Cancel the armed retry timer.
        case cancelRetryTimer
        /// Delete a download's partial file (never its destination). An upload has none: ignore it.
        case removePartialFile
        /// Save the task's ``TaskRecord``: its state or outcome changed.
        case persist
        /// The public state changed (D-Bus `State`).
        case publishState(TransferTaskState)
        /// Send `TaskDidResume`.
        case emitDidResume
        /// Send `TaskDidSuspend`.
        case emitDidSuspend
        /// Send `TaskDidComplete` with this outcome.
        case emitDidComplete(TransferOutcome)
    }

    private struct RetryTimer: Sendable {
        var deadline: Instant
        var generation: UInt64
    }

    /// A task the owner has yet to ``start(now:)``, by the public state it shows meanwhile.
    private enum Unstarted: Sendable {
        /// A new task: suspended until its first start.
        case new
        /// Restored while running: continues on start.
        case running
        /// Restored while canceling: the daemon stopped before the cancel finished; finishes on start.
        case canceling
    }

    private enum State: Sendable {
        case unstarted(Unstarted)
        /// Running, with an attempt in flight.
        case transferring
        /// Running again after a suspend whose attempt has not yet reported stopping; the next attempt starts when it
        /// has.
        case restarting
        /// Running, with no attempt in flight: the next one starts when the timer fires.
        case waitingToRetry(RetryTimer)
        /// Suspended; `stopping` while the attempt that was in flight has not yet reported stopping.
        case suspended(stopping: Bool)
        /// Cancelled, waiting for the attempt in flight to report stopping.
        case canceling
        case completed(TransferOutcome)
    }

    private var current: State
    private var lastGeneration: UInt64 = 0

    /// How many times a transient failure is retried in one run (the `max-retries` option, default 5).
    package let maxRetries: UInt32
    /// The delays between attempts.
    package let retryPolicy: RetryPolicy
    /// The number of the attempt last started in the current run (1 for the first; a `Resume` starts a new run), or 0
    /// before any.
    package private(set) var attempt = 0

    /// Runs of the owner in a row, the current one included while its attempt is in flight, in which an attempt of
    /// this task was in flight and never ended: read after a crash, the unclean exits in a row that cut one short.
    package private(set) var interruptedRuns: UInt32 = 0
    /// Whether ``interruptedRuns`` counts the current run.
    private var countsThisRun = false
    /// Why the owner itself suspended the task (the crash-loop guard), for clients (D-Bus `ErrorMessage`); nil
    /// otherwise, and cleared when the task runs again or completes.
    package private(set) var notice: String?

    /// Unclean exits in a row with an attempt in flight after which a restored task is not started again.
    package static var interruptedRunLimit: UInt32 { 2 }
    /// The ``notice`` of a task the crash-loop guard suspended.
    package static var interruptedNotice: String {
        "hauld exited unexpectedly twice in a row while this transfer was in flight, so it was not started again; "
            + "Resume continues it"
    }

    /// Creates a new task, suspended until ``start(now:)`` or its first ``resume(now:)``.
    package init(maxRetries: UInt32 = 5, retryPolicy: RetryPolicy = RetryPolicy()) {
        self.current = .unstarted(.new)
        self.maxRetries = maxRetries
        self.retryPolicy = retryPolicy
    }

    /// Restores a task loaded from disk in the `state` it had; then save what changed of the record (the new
    /// ``interruptedRuns`` and ``notice``: before the attempt starts, so a crash in it is counted) and call
    /// ``start(now:)``.
    ///
    /// `outcome` is read only for a completed task, `notice` only for a suspended one. A completed task without an
    /// outcome (a ``TaskRecord`` refuses to decode such a thing, but the memberwise initializer can build it) completes
    /// with a permanent failure saying so. A running one that `interruptedRuns` says was cut short by
    /// ``interruptedRunLimit`` unclean exits in a row is restored suspended, with the ``interruptedNotice``.
    package init(
        restoring state: TransferTaskState,
        outcome: TransferOutcome?,
        interruptedRuns: UInt32 = 0,
        notice: String? = nil,
        maxRetries: UInt32 = 5,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.interruptedRuns = interruptedRuns
        switch state {
        case .running where interruptedRuns >= Self.interruptedRunLimit:
            current = .suspended(stopping: false)
            self.interruptedRuns = 0
            self.notice = Self.interruptedNotice
        case .running:
            // This run starts the attempt (unless suspended first): it counts from now on.
            current = .unstarted(.running)
            self.interruptedRuns = interruptedRuns + 1
            countsThisRun = true
        case .suspended:
            current = .suspended(stopping: false)
            self.notice = notice
        case .canceling:
            current = .unstarted(.canceling)
        case .completed:
            let lost = TransferFailure(kind: .network, message: "the outcome of the task was lost", isTransient: false)
            current = .completed(outcome ?? .failure(lost))
        }
        self.maxRetries = maxRetries
        self.retryPolicy = retryPolicy
    }

    /// The public state (D-Bus `State`).
    package var state: TransferTaskState {
        switch current {
        case .unstarted(.new), .suspended: .suspended
        case .unstarted(.running), .transferring, .restarting, .waitingToRetry: .running
        case .unstarted(.canceling), .canceling: .canceling
        case .completed: .completed
        }
    }

    /// How the task ended, once ``state`` is ``TransferTaskState/completed``.
    package var outcome: TransferOutcome? {
        guard case .completed(let outcome) = current else { return nil }
        return outcome
    }

    /// Whether `Suspend` and `Resume` can still change anything (D-Bus `Pausable`): until the task is canceling or
    /// completed.
    package var isPausable: Bool {
        state == .running || state == .suspended
    }

    /// Whether `Cancel` can still change anything (D-Bus `Cancellable`): until the task is canceling or completed.
    package var isCancellable: Bool {
        state == .running || state == .suspended
    }

    // MARK: - Owner events

    /// The owner starts driving the task: a new task runs (its first resume), a restored running one continues
    /// silently, a restored canceling one finishes its cancel. Does nothing for any other task, so it is safe to call
    /// for every restored task.
    package mutating func start(now: Instant) -> [Action] {
        recording { $0.started() }
    }

    private mutating func started() -> [Action] {
        switch current {
        case .unstarted(.new):
            return run(announcing: true)
        case .unstarted(.running):
            return run(announcing: false)
        case .unstarted(.canceling):
            return complete(.failure(.cancelled))
        case .transferring, .restarting, .waitingToRetry, .suspended, .canceling, .completed:
            return []
        }
    }

    // MARK: - Client commands

    /// The client's `Suspend`. Throws ``TaskCommandError/taskCompleted`` on a completed task; does nothing on a task
    /// already suspended or canceling.
    package mutating func suspend(now: Instant) throws(TaskCommandError) -> [Action] {
        try recording { machine throws(TaskCommandError) in try machine.suspended() }
    }

    private mutating func suspended() throws(TaskCommandError) -> [Action] {
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.new), .suspended, .unstarted(.canceling), .canceling:
            return []
        case .unstarted(.running):
            // Its attempt never started: this run does not count after all.
            if countsThisRun { interruptedRuns -= 1 }
            countsThisRun = false
            current = .suspended(stopping: false)
            return announce(.suspended)
        case .transferring:
            current = .suspended(stopping: true)
            return [.stopTransfer] + announce(.suspended)
        case .restarting:
            // The stop requested by the earlier suspend is still under way.
            current = .suspended(stopping: true)
            return announce(.suspended)
        case .waitingToRetry:
            current = .suspended(stopping: false)
            return [.cancelRetryTimer] + announce(.suspended)
        }
    }

    /// The client's `Resume`: starts a fresh run, with a fresh retry budget. Throws
    /// ``TaskCommandError/taskCompleted`` on a completed task; does nothing on a task already running or canceling.
    package mutating func resume(now: Instant) throws(TaskCommandError) -> [Action] {
        try recording { machine throws(TaskCommandError) in try machine.resumed() }
    }

    private mutating func resumed() throws(TaskCommandError) -> [Action] {
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.new), .suspended(stopping: false):
            notice = nil
            return run(announcing: true)
        case .suspended(stopping: true):
            // The next attempt must wait until the stopping one has let go of the partial file.
            notice = nil
            current = .restarting
            return announce(.running)
        case .unstarted(.running), .transferring, .restarting, .waitingToRetry, .unstarted(.canceling), .canceling:
            return []
        }
    }

    /// The client's `Cancel`: stops the transfer, removes the partial file and completes the task as cancelled.
    /// Throws ``TaskCommandError/taskCompleted`` on a completed task; does nothing on a task already canceling.
    package mutating func cancel(now: Instant) throws(TaskCommandError) -> [Action] {
        try recording { machine throws(TaskCommandError) in try machine.cancelled() }
    }

    private mutating func cancelled() throws(TaskCommandError) -> [Action] {
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.canceling), .canceling:
            return []
        case .unstarted(.new), .unstarted(.running), .suspended(stopping: false):
            return complete(.failure(.cancelled))
        case .waitingToRetry:
            return [.cancelRetryTimer] + complete(.failure(.cancelled))
        case .transferring:
            current = .canceling
            return [.stopTransfer] + announceCanceling()
        case .restarting, .suspended(stopping: true):
            // A stop is already under way; its report finishes the cancel.
            current = .canceling
            return announceCanceling()
        }
    }

    // MARK: - Transfer events

    /// The transfer in flight stopped, as asked by ``Action/stopTransfer``.
    ///
    /// A stop nobody asked for is treated as a transient network failure, so the task neither hangs nor gives up.
    package mutating func transferStopped(now: Instant) -> [Action] {
        recording { $0.stopped(now: now) }
    }

    private mutating func stopped(now: Instant) -> [Action] {
        switch current {
        case .transferring:
            return failed(.network("the transfer stopped unexpectedly"), now: now)
        case .restarting:
            attemptEnded()
            return startAttempt(1)
        case .suspended(stopping: true):
            attemptEnded()
            current = .suspended(stopping: false)
            return []
        case .canceling:
            return complete(.failure(.cancelled))
        case .unstarted, .waitingToRetry, .suspended(stopping: false), .completed:
            return []
        }
    }

    /// The transfer in flight ended for a reason that is not the task's: the owner's scheduler stopped it (sleep, a
    /// metered network, power-saver) or it failed while the network was down. The run goes on and no retry is spent:
    /// the same attempt number is started again once the owner lets it. Outside running this is a plain
    /// ``transferStopped(now:)``.
    package mutating func transferSetBack(now: Instant) -> [Action] {
        recording { machine in
            guard case .transferring = machine.current else { return machine.stopped(now: now) }
            machine.attemptEnded()
            return machine.startAttempt(machine.attempt)
        }
    }

    /// The transfer in flight finished: the file is complete, verified and in place (download), or the server
    /// accepted the body (upload). Completes the task successfully, even if a stop had been requested.
    package mutating func transferSucceeded(now: Instant) -> [Action] {
        recording { $0.succeeded() }
    }

    private mutating func succeeded() -> [Action] {
        switch current {
        case .transferring, .restarting, .suspended(stopping: true), .canceling:
            return complete(.success)
        case .unstarted, .waitingToRetry, .suspended(stopping: false), .completed:
            return []
        }
    }

    /// The transfer in flight failed.
    ///
    /// While running, a transient failure with retries left arms the retry timer (the task stays running);
    /// otherwise the task completes with this failure, the last one. See the type's documentation for a failure
    /// after a stop request.
    package mutating func transferFailed(_ failure: TransferFailure, now: Instant) -> [Action] {
        recording { $0.failed(failure, now: now) }
    }

    private mutating func failed(_ failure: TransferFailure, now: Instant) -> [Action] {
        switch current {
        case .transferring:
            attemptEnded()
            guard failure.isTransient, attempt <= Int(maxRetries) else {
                return complete(.failure(failure))
            }
            let delay = retryPolicy.delay(afterAttempt: attempt, retryAfter: failure.retryAfter)
            let timer = RetryTimer(deadline: now.advanced(by: delay), generation: nextGeneration())
            current = .waitingToRetry(timer)
            return [.armRetryTimer(deadline: timer.deadline, generation: timer.generation)]
        case .restarting:
            attemptEnded()
            return failure.isTransient ? startAttempt(1) : complete(.failure(failure))
        case .suspended(stopping: true):
            attemptEnded()
            guard failure.isTransient else { return complete(.failure(failure)) }
            current = .suspended(stopping: false)
            return []
        case .canceling:
            return complete(.failure(.cancelled))
        case .unstarted, .waitingToRetry, .suspended(stopping: false), .completed:
            return []
        }
    }

    /// The retry timer armed with `generation` fired.
    ///
    /// A stale generation does nothing. A timer reported before its deadline is re-armed rather than honoured, so an
    /// early wake-up never shortens a back-off.
    package mutating func retryTimerFired(generation: UInt64, now: Instant) -> [Action] {
        recording { $0.retryDue(generation, now: now) }
    }

    private mutating func retryDue(_ generation: UInt64, now: Instant) -> [Action] {
        guard case .waitingToRetry(let timer) = current, timer.generation == generation else { return [] }
        guard now >= timer.deadline else {
            let rearmed = RetryTimer(deadline: timer.deadline, generation: nextGeneration())
            current = .waitingToRetry(rearmed)
            return [.armRetryTimer(deadline: rearmed.deadline, generation: rearmed.generation)]
        }
        return startAttempt(attempt + 1)
    }

    /// The owner's queue holds the task back (it runs for its clients, but no attempt of it is in flight): until one
    /// is, an unclean exit does not cut anything short, so the current run does not count.
    package mutating func attemptHeldBack() -> [Action] {
        recording { machine in
            if machine.countsThisRun { machine.interruptedRuns = machine.interruptedRuns == 0 ? 0 : machine.interruptedRuns - 1 }
            machine.countsThisRun = false
            return []
        }
    }

    /// The owner starts the attempt its queue held back: the current run counts from now on (save the record first,
    /// so that a crash in the attempt is counted).
    package mutating func attemptLetThrough() -> [Action] {
        recording { machine in
            if !machine.countsThisRun {
                machine.interruptedRuns = machine.interruptedRuns == .max ? .max : machine.interruptedRuns + 1
                machine.countsThisRun = true
            }
            return []
        }
    }

    /// The owner stops cleanly, its attempts with it (they need not report): the run ended without an unclean exit,
    /// so ``interruptedRuns`` starts again from 0.
    package mutating func ownerStoppingCleanly() -> [Action] {
        recording { machine in
            machine.interruptedRuns = 0
            machine.countsThisRun = false
            return []
        }
    }

    // MARK: - Transitions

    /// Runs an event, adding ``Action/persist`` when it changed what a ``TaskRecord`` keeps and said nothing of it.
    private mutating func recording<Failure: Error>(
        _ event: (inout Self) throws(Failure) -> [Action]
    ) throws(Failure) -> [Action] {
        let before = Recorded(self)
        var actions = try event(&self)
        if Recorded(self) != before, !actions.contains(.persist) { actions.append(.persist) }
        return actions
    }

    /// What a ``TaskRecord`` keeps of the machine.
    private struct Recorded: Equatable {
        var state: TransferTaskState
        var outcome: TransferOutcome?
        var interruptedRuns: UInt32
        var notice: String?

        init(_ machine: TransferTaskStateMachine) {
            state = machine.state
            outcome = machine.outcome
            interruptedRuns = machine.interruptedRuns
            notice = machine.notice
        }
    }

    /// The attempt in flight ended by itself: the owner survived it, so the count of interrupted runs starts again.
    private mutating func attemptEnded() {
        interruptedRuns = 0
        countsThisRun = false
    }

    /// Enters running with the first attempt of a new run, announcing it as a resume unless the task was already
    /// running for its clients (restored).
    private mutating func run(announcing: Bool) -> [Action] {
        let start = startAttempt(1)
        return announcing ? start + announce(.running) : start
    }

    private mutating func startAttempt(_ number: Int) -> [Action] {
        if !countsThisRun {
            // Saturating: a count read from a damaged record must not trap.
            interruptedRuns = interruptedRuns == .max ? .max : interruptedRuns + 1
            countsThisRun = true
        }
        attempt = number
        current = .transferring
        return [.startTransfer(attempt: number)]
    }

    /// What entering running or suspended says: saved, published, signalled.
    private func announce(_ state: TransferTaskState) -> [Action] {
        [.persist, .publishState(state), state == .running ? .emitDidResume : .emitDidSuspend]
    }

    /// Canceling has no signal of its own: `TaskDidComplete` follows when the transfer has stopped.
    private func announceCanceling() -> [Action] {
        [.persist, .publishState(.canceling)]
    }

    private mutating func complete(_ outcome: TransferOutcome) -> [Action] {
        attemptEnded()
        notice = nil
        current = .completed(outcome)
        let cleanup: [Action] = outcome == .success ? [] : [.removePartialFile]
        return cleanup + [.persist, .publishState(.completed), .emitDidComplete(outcome)]
    }

    private mutating func nextGeneration() -> UInt64 {
        // Wrapping is unreachable in practice (2^64 timers) and must never trap.
        lastGeneration &+= 1
        return lastGeneration
    }
}
