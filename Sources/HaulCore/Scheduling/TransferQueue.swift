/// Which task does what next: every task's lifecycle (``TransferTaskStateMachine``) and crash-loop guard
/// (``CrashLoopGuard``), and the scheduler (``TransferScheduler``) that says when an attempt may be in flight, as one
/// sans-I/O state machine.
///
/// Every event — a client's command, an attempt's report, a change of the conditions or of a task's settings, the
/// timer — carries `now` and returns one ordered list of ``Action``s for the owner to carry out, with no `await` in
/// between: stops first (so connections close before new ones open), then partial files removed, records saved,
/// states published and signals sent, then attempts started (each after the save that counts it for the crash-loop
/// guard), then the timer, then the running count.
///
/// How the parts fit:
/// - A task's lifecycle machine decides when the task wants an attempt (`startTransfer`) and, after a failure,
///   whether it retries and how long it backs off (`waitToRetry`). The queue holds the wanted attempt until the
///   scheduler gives the task a slot, and hands the back-off to the scheduler, which waits it out with one timer for
///   every task (`WaitingFor=retry`) and gives the slot when it is over: the back-off has one owner.
/// - An attempt the lifecycle wants but that never started has nothing to stop: a suspend or cancel of a queued task
///   takes effect at once.
/// - The crash-loop guard counts a run only when an attempt really starts, so a task the queue holds back is never
///   counted.
/// - What clients see (``PublicState``: the lifecycle's state and the scheduler's `WaitingFor`, `queued` when a
///   running task waits) is published once per event, as it stands at the end of the event: a new task over the limit
///   is announced `queued`, never `running` first.
///
/// The owner's side: every ``Action/startAttempt(_:attempt:)`` is answered by exactly one
/// ``attemptEnded(_:_:now:)``, after a ``Action/stopAttempt(_:)`` or not. ``Action/armTimer(deadline:generation:)``
/// is answered by ``timerFired(generation:now:)``; a stale generation does nothing.
///
/// The work of an event does not grow with the number of tasks (the scheduler's heaps and counts), except a change of
/// the conditions, which may change every task's `WaitingFor`, and ``ownerStoppingCleanly()`` and the restore, which
/// look at every task once.
///
/// hauld's queue counts time on `ContinuousClock` (the tests' on a manual clock), and every method hauld calls has a
/// specialization for it (`@_specialize(exported: true, …)`): called from another module, the generic code looked up
/// type metadata at run time at every step, 17 % of the event loop's samples in a `SuspendAll` of 10,000 tasks (2 %
/// with the specializations).
package struct TransferQueue<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package typealias Lifecycle = TransferTaskStateMachine<Instant>
    package typealias Scheduler = TransferScheduler<Instant>

    /// What the owner must do after an event, in the order given.
    package enum Action: Equatable, Sendable {
        /// Stop the task's attempt promptly, then report ``TransferQueue/attemptEnded(_:_:now:)``.
        case stopAttempt(UInt32)
        /// Delete a download's partial file (never its destination). An upload has none: ignore it.
        case removePartialFile(UInt32)
        /// Save the task's record: what the queue keeps of it (``Entry``) changed.
        case persist(UInt32)
        /// What clients see of the task changed: publish its `State`, `WaitingFor` and what follows from its lifecycle
        /// (`Pausable`, `Cancellable`, `ErrorName`, `ErrorMessage`).
        case publishState(UInt32, PublicState)
        case emitDidResume(UInt32)
        case emitDidSuspend(UInt32)
        case emitDidComplete(UInt32, TransferOutcome)
        /// Start attempt number `attempt` of the task (1 for the first of a run), continuing from its bytes on disk
        /// where the server allows it.
        case startAttempt(UInt32, attempt: Int)
        /// Schedule the timer for `deadline`, replacing any timer already scheduled, and report it with
        /// ``TransferQueue/timerFired(generation:now:)`` and this `generation`.
        case armTimer(deadline: Instant, generation: UInt64)
        /// Cancel the scheduled timer.
        case cancelTimer
        /// How many attempts are transferring changed (the indicator's `ActivityCount`: a queued task never counts).
        case runningCountChanged(Int)
    }

    /// What clients see of a task's progress through the queue.
    package struct PublicState: Equatable, Sendable {
        /// The lifecycle's state.
        package var state: TransferTaskState
        /// Why a running task waits; nil while it transfers, and for every other state.
        package var waitingFor: WaitingFor?

        package init(state: TransferTaskState, waitingFor: WaitingFor? = nil) {
            self.state = state
            self.waitingFor = waitingFor
        }

        /// Running for its client, but waiting (D-Bus `State` `queued`).
        package var isQueued: Bool { state == .running && waitingFor != nil }
    }

    /// What the scheduler needs to know of a task, set at creation and changed by its client.
    package struct Traits: Equatable, Sendable {
        package var priority: TransferPriority
        /// May transfer on a metered network (D-Bus `AllowMetered`).
        package var allowMetered: Bool
        /// The task's URL is loopback (``LoopbackHost``): it never waits for the network.
        package var isLoopback: Bool

        package init(priority: TransferPriority = .foreground, allowMetered: Bool? = nil, isLoopback: Bool = false) {
            self.priority = priority
            self.allowMetered = allowMetered ?? priority.allowsMeteredByDefault
            self.isLoopback = isLoopback
        }
    }

    /// One task as the queue holds it.
    package struct Entry: Sendable {
        package internal(set) var lifecycle: Lifecycle
        package internal(set) var crashLoop: CrashLoopGuard
        package internal(set) var traits: Traits
        /// Its place in the queue, saved so that a restart gives the same queue: the higher, the later it joined.
        package internal(set) var queuePosition: UInt64
        /// The attempt number the lifecycle wants started, until the scheduler gives the task a slot.
        var wantedAttempt: Int?
        /// When the back-off the lifecycle asked for runs out, until the scheduler has it.
        var retryAt: Instant?
        /// An attempt is in flight: started, and not yet reported.
        package internal(set) var hasAttemptInFlight = false
        /// What clients were last shown.
        var published: PublicState?
    }

    var entries: [UInt32: Entry] = [:]
    package internal(set) var scheduler: Scheduler
    /// The highest ``Entry/queuePosition`` given.
    package internal(set) var lastQueuePosition: UInt64 = 0
    var lastRunningCount = 0
    /// Restored tasks the crash-loop guard held suspended: their records are saved when they continue.
    var trippedAtRestore: Set<UInt32> = []

    /// A queue without tasks, with `MaxRunningTasks` `maxRunningTasks` (0: no limit) and the conditions of a machine
    /// without NetworkManager or power-profiles-daemon.
    package init(maxRunningTasks: UInt32 = Scheduler.defaultMaxRunningTasks) {
        scheduler = Scheduler(maxRunningTasks: maxRunningTasks)
    }

    // MARK: - Queries

    /// The task `id`, or nil for one the queue does not hold.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package func entry(_ id: UInt32) -> Entry? { entries[id] }

    /// How many tasks the queue holds.
    package var count: Int { entries.count }

    /// What clients see of the task now.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package func publicState(of id: UInt32) -> PublicState? {
        entries[id].map { publicState(id, $0) }
    }

    /// Whether an attempt of the task is transferring (not queued, not stopping): the progress ticker reads these.
    @_specialize(exported: true, where Instant == ContinuousClock.Instant)
    package func isTransferring(_ id: UInt32) -> Bool {
        scheduler.task(id)?.attempt == .running
    }

    func publicState(_ id: UInt32, _ entry: Entry) -> PublicState {
        let state = entry.lifecycle.state
        return PublicState(state: state, waitingFor: state == .running ? scheduler.waitingFor(id) : nil)
    }
}
