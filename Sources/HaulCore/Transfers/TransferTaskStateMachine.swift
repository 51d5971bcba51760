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
/// - call ``start(now:)`` once for a task restored with ``init(restoring:outcome:maxRetries:retryPolicy:)``: a
///   running one continues from its bytes on disk without any signal (for its clients it never stopped), a canceling
///   one finishes its cancel, the others stay as they are;
/// - every ``Action/startTransfer(attempt:)`` is answered by exactly one of ``transferSucceeded(now:)``,
///   ``transferFailed(_:now:)``, ``transferSetBack(now:)`` or — only after a ``Action/stopTransfer`` —
///   ``transferStopped(now:)``. A transfer asked to stop may still report that it finished first; the machine never
///   starts a transfer before the previous one has reported, so two never write the same partial file;
/// - ``Action/waitToRetry(until:)`` is answered by ``retryDue(now:)`` once the back-off has run out. The machine
///   decides whether a failure is retried and how long the task waits (its retry budget and policy); waiting it out
///   is the owner's (`TransferQueue` hands it to `TransferScheduler`, which keeps one timer for every task).
///
/// Decisions made here, which the contract does not spell out:
/// - a client's `Resume` starts a fresh run: the attempt count and so the retry budget start again at 1, and a task
///   suspended while waiting to retry restarts at once; `Retry` does the same, and also runs again a task that
///   completed with a failure other than cancellation;
/// - a transfer that reports success after a stop request wins: the file is complete and in place, so the task
///   completes successfully even though it was being suspended or cancelled;
/// - a failure reported while suspended completes the task if it is permanent (resuming could not help); a transient
///   one is dropped, since the next `Resume` starts a fresh attempt anyway. A failure while canceling completes the
///   cancel;
/// - cancelling a task with nothing in flight (suspended, waiting to retry, not started) completes it at once, without
///   passing through `canceling`; `Suspend` and `Resume` of a canceling task do nothing (a cancel cannot be undone);
/// - a task that completes with a failure, cancellation included, can never resume: its partial file is removed.
///
/// The crash-loop guard (`CrashLoopGuard`) is not the machine's: its owner keeps one beside it.
///
/// Each of ``Action/publishState(_:)``, ``Action/emitDidResume``, ``Action/emitDidSuspend`` and
/// ``Action/emitDidComplete(_:)`` is emitted exactly once per real change, and ``Action/persist`` once whenever what
/// a ``TaskRecord`` keeps of the lifecycle (``state`` and ``outcome``) changed.
package struct TransferTaskStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the owner must do after an event, in the order given.
    package enum Action: Equatable, Sendable {
        /// Start transfer attempt number `attempt` (1 for the first of a run), continuing from the bytes on disk
        /// where the server allows it.
        case startTransfer(attempt: Int)
        /// Stop the transfer in flight promptly (nothing more written, the socket no longer read), then report
        /// ``TransferTaskStateMachine/transferStopped(now:)``.
        case stopTransfer
        /// The attempt failed and will be retried: wait until `until`, then report
        /// ``TransferTaskStateMachine/retryDue(now:)``. A suspend or cancel meanwhile ends the wait.
        case waitToRetry(until: Instant)
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
        /// Running, with no attempt in flight: the next one starts when the back-off is over.
        case waitingToRetry
        /// Suspended; `stopping` while the attempt that was in flight has not yet reported stopping.
        case suspended(stopping: Bool)
        /// Cancelled, waiting for the attempt in flight to report stopping.
        case canceling
        case completed(TransferOutcome)
    }

    private var current: State

    /// How many times a transient failure is retried in one run (the `max-retries` option, default 5).
    package let maxRetries: UInt32
    /// The delays between attempts.
    package let retryPolicy: RetryPolicy
    /// The number of the attempt last started in the current run (1 for the first; a `Resume` starts a new run), or 0
    /// before any.
    package private(set) var attempt = 0

    /// Creates a new task, suspended until ``start(now:)`` or its first ``resume(now:)``.
    package init(maxRetries: UInt32 = 5, retryPolicy: RetryPolicy = RetryPolicy()) {
        self.current = .unstarted(.new)
        self.maxRetries = maxRetries
        self.retryPolicy = retryPolicy
    }

    /// Restores a task loaded from disk in the `state` it had; then call ``start(now:)``.
    ///
    /// `outcome` is read only for a completed task. A completed task without an outcome (a ``TaskRecord`` refuses to
    /// decode such a thing, but the memberwise initializer can build it) completes with a permanent failure saying so.
    package init(
        restoring state: TransferTaskState,
        outcome: TransferOutcome?,
        maxRetries: UInt32 = 5,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        switch state {
        case .running:
            current = .unstarted(.running)
        case .suspended:
            current = .suspended(stopping: false)
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
        switch current {
        case .unstarted(.new):
            return run(announcing: true)
        case .unstarted(.running):
            return startAttempt(1)
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
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.new), .suspended, .unstarted(.canceling), .canceling:
            return []
        case .unstarted(.running), .waitingToRetry:
            current = .suspended(stopping: false)
            return announce(.suspended)
        case .transferring:
            current = .suspended(stopping: true)
            return [.stopTransfer] + announce(.suspended)
        case .restarting:
            // The stop requested by the earlier suspend is still under way.
            current = .suspended(stopping: true)
            return announce(.suspended)
        }
    }

    /// The client's `Resume`: starts a fresh run, with a fresh retry budget. Throws
    /// ``TaskCommandError/taskCompleted`` on a completed task; does nothing on a task already running or canceling.
    package mutating func resume(now: Instant) throws(TaskCommandError) -> [Action] {
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.new), .suspended(stopping: false):
            return run(announcing: true)
        case .suspended(stopping: true):
            // The next attempt must wait until the stopping one has let go of the partial file.
            current = .restarting
            return announce(.running)
        case .unstarted(.running), .transferring, .restarting, .waitingToRetry, .unstarted(.canceling), .canceling:
            return []
        }
    }

    /// The client's `Retry`: a task that completed with a failure other than cancellation runs again, from the bytes
    /// it kept, with a fresh retry budget; an unfinished task is resumed (``resume(now:)``). Throws
    /// ``TaskCommandError/taskCompleted`` on a task that succeeded or was cancelled.
    package mutating func retry(now: Instant) throws(TaskCommandError) -> [Action] {
        guard case .completed(let outcome) = current else { return try resume(now: now) }
        guard let failure = outcome.failure, failure != .cancelled else { throw .taskCompleted }
        return run(announcing: true)
    }

    /// The client's `Cancel`: stops the transfer, removes the partial file and completes the task as cancelled.
    /// Throws ``TaskCommandError/taskCompleted`` on a completed task; does nothing on a task already canceling.
    package mutating func cancel(now: Instant) throws(TaskCommandError) -> [Action] {
        switch current {
        case .completed:
            throw .taskCompleted
        case .unstarted(.canceling), .canceling:
            return []
        case .unstarted(.new), .unstarted(.running), .suspended(stopping: false), .waitingToRetry:
            return complete(.failure(.cancelled))
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
        switch current {
        case .transferring:
            return transferFailed(.network("the transfer stopped unexpectedly"), now: now)
        case .restarting:
            return startAttempt(1)
        case .suspended(stopping: true):
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
        guard case .transferring = current else { return transferStopped(now: now) }
        return startAttempt(attempt)
    }

    /// The transfer in flight finished: the file is complete, verified and in place (download), or the server
    /// accepted the body (upload). Completes the task successfully, even if a stop had been requested.
    package mutating func transferSucceeded(now: Instant) -> [Action] {
        switch current {
        case .transferring, .restarting, .suspended(stopping: true), .canceling:
            return complete(.success)
        case .unstarted, .waitingToRetry, .suspended(stopping: false), .completed:
            return []
        }
    }

    /// The transfer in flight failed.
    ///
    /// While running, a transient failure with retries left waits out a back-off (``Action/waitToRetry(until:)``;
    /// the task stays running); otherwise the task completes with this failure, the last one. See the type's
    /// documentation for a failure after a stop request.
    package mutating func transferFailed(_ failure: TransferFailure, now: Instant) -> [Action] {
        switch current {
        case .transferring:
            guard failure.isTransient, attempt <= Int(maxRetries) else {
                return complete(.failure(failure))
            }
            let delay = retryPolicy.delay(afterAttempt: attempt, retryAfter: failure.retryAfter)
            current = .waitingToRetry
            return [.waitToRetry(until: now.advanced(by: delay))]
        case .restarting:
            return failure.isTransient ? startAttempt(1) : complete(.failure(failure))
        case .suspended(stopping: true):
            guard failure.isTransient else { return complete(.failure(failure)) }
            current = .suspended(stopping: false)
            return []
        case .canceling:
            return complete(.failure(.cancelled))
        case .unstarted, .waitingToRetry, .suspended(stopping: false), .completed:
            return []
        }
    }

    /// The back-off of ``Action/waitToRetry(until:)`` is over: the next attempt starts. Does nothing unless the task
    /// is waiting to retry.
    package mutating func retryDue(now: Instant) -> [Action] {
        guard case .waitingToRetry = current else { return [] }
        return startAttempt(attempt + 1)
    }

    // MARK: - Transitions

    /// Enters running with the first attempt of a new run, announcing it as a resume.
    private mutating func run(announcing: Bool) -> [Action] {
        let start = startAttempt(1)
        return announcing ? start + announce(.running) : start
    }

    private mutating func startAttempt(_ number: Int) -> [Action] {
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
        current = .completed(outcome)
        let cleanup: [Action] = outcome == .success ? [] : [.removePartialFile]
        return cleanup + [.persist, .publishState(.completed), .emitDidComplete(outcome)]
    }
}
