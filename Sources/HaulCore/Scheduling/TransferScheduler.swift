/// Decides which tasks transfer, and why the others wait: a sans-I/O state machine.
///
/// The scheduler sees only what a decision needs — each task's priority, whether it may use a metered network,
/// whether it is loopback, whether its client wants it to run — and the machine's conditions: network state,
/// metered, power-saver, sleep and `MaxRunningTasks`. Every event carries `now` and returns the ``Action``s its owner
/// must perform, in order: stops first (so connections close before new ones open), then `WaitingFor` changes, then
/// starts, then the timer and the queue order. The task's lifecycle (suspended, running, completed, the retry budget)
/// stays with ``TransferTaskStateMachine``; this machine only says when an attempt may be in flight.
///
/// The rules:
/// - At most `MaxRunningTasks` attempts are in flight (0: no limit). Free slots go to foreground tasks before
///   background ones, and within a priority in the order the tasks joined the queue (``queueOrder``). A free slot is
///   never taken from a running task: priority orders the queue, it does not preempt.
/// - A task that wants to run but may not is queued with the first reason of ``WaitingFor`` that applies. Loopback
///   tasks never wait for the network, a non-metered network or mains power.
/// - A change of network state never stops a running attempt: a transfer that still works keeps working, and one
///   that does not fails by itself — and then spends no retry (``failureSpendsRetry(_:)``).
/// - Sleep, a metered network a task may not use, and power-saver for a background task do stop its running attempt:
///   they are the user's or the system's say on cost and battery, and a download that kept going would defeat them.
/// - Lowering `MaxRunningTasks` stops nothing: running attempts finish (or fail) and their slots are not refilled
///   until the count is under the new limit. Cutting a transfer in the middle throws away its connection for no gain
///   the user would notice, and `Suspend` is there for anyone in a hurry.
/// - A stopped attempt keeps its slot until the owner reports it has stopped, so a new attempt never opens beside one
///   still closing and the server never sees more than `MaxRunningTasks` connections.
/// - The scheduler never fails a task: waiting costs nothing, and retries are spent only by real attempts.
///
/// The owner's side: every ``Action/startAttempt(_:)`` ends with exactly one report — ``completed(_:now:)`` (the
/// task is done), ``attemptFailed(_:retryDelay:now:)`` or ``attemptStopped(_:now:)``. A suspend or cancel stops the
/// same attempt that ``TransferTaskStateMachine`` asks to stop: the owner stops it once, whichever asks first.
///
/// One timer serves every retry back-off: it is armed for the earliest deadline; one that fires with a generation
/// other than the last armed is stale and ignored, and one that fires early is re-armed rather than honoured.
///
/// The work of an event does not grow with the number of tasks: the tasks ready to start wait in heaps (one per kind
/// of task the conditions treat alike, ordered by priority and ticket), the back-offs in a heap by deadline, and the
/// counts are kept rather than recounted. Only a change of the conditions, which may change every task's
/// `WaitingFor`, looks at every task.
package struct TransferScheduler<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the owner must do after an event, in the order given.
    package enum Action: Equatable, Sendable {
        /// Start an attempt of the task (continuing from its bytes on disk where the server allows it).
        case startAttempt(UInt32)
        /// Stop the task's attempt promptly and report ``TransferScheduler/attemptStopped(_:now:)``. Its slot stays
        /// taken until then.
        case stopAttempt(UInt32)
        /// The task's `WaitingFor` changed; nil is `""`: running, suspended, or leaving the queue. A task the machine
        /// wants running and gives a reason is `queued`.
        case publishWaitingFor(UInt32, WaitingFor?)
        /// Schedule the timer for `deadline`, replacing any timer already scheduled, and report it with
        /// ``TransferScheduler/timerFired(generation:now:)`` and this `generation`.
        case armTimer(deadline: Instant, generation: UInt64)
        /// Cancel the scheduled timer. Only emitted while one is armed.
        case cancelTimer
        /// Save ``TransferScheduler/queueOrder``: a task joined the queue or moved in it.
        case saveQueueOrder
    }

    /// Where a task's attempt is.
    package enum AttemptPhase: Sendable, Hashable {
        /// No attempt in flight.
        case idle
        /// An attempt is transferring.
        case running
        /// The attempt was asked to stop and has not reported it yet; it still holds its slot.
        case stopping
    }

    /// What the scheduler knows of one task.
    package struct ScheduledTask: Sendable, Equatable {
        package internal(set) var priority: TransferPriority
        /// May transfer on a metered network (D-Bus `AllowMetered`).
        package internal(set) var allowMetered: Bool
        /// The task's URL is loopback (``LoopbackHost``).
        package internal(set) var isLoopback: Bool
        /// The client wants it to run: false while suspended.
        package internal(set) var wantsToRun: Bool
        /// Where its attempt is: a stopping one still holds its slot.
        package internal(set) var attempt: AttemptPhase
        /// When the back-off after a failed attempt runs out.
        package internal(set) var retryDeadline: Instant?
        /// The `WaitingFor` last published for the task.
        package internal(set) var waitingFor: WaitingFor?
        /// The task's place in the queue: the tasks of a priority run in the order of their tickets.
        var ticket: UInt64
        /// Removed by the owner while its attempt stops: it only holds its slot until then.
        var isRemoved = false
        /// Which entry of the ready heaps is the task's own: the last one pushed. Older ones are stale.
        var readyStamp: UInt64 = 0

        /// Wants an attempt and may start one as soon as the conditions and a slot allow.
        var isReady: Bool { !isRemoved && wantsToRun && attempt == .idle && retryDeadline == nil }

        /// The tasks the conditions treat alike.
        var kind: Kind { Kind(priority: priority, isLoopback: isLoopback, allowMetered: allowMetered) }

        /// Where the task stands in the order slots are given: foreground before background, then by ticket.
        var admission: Admission { Admission(priority: priority, ticket: ticket) }
    }

    /// What the conditions look at in a task: tasks of one kind are held back, or not, together.
    struct Kind: Hashable, Sendable {
        var priority: TransferPriority
        var isLoopback: Bool
        var allowMetered: Bool
    }

    /// The order slots are given in.
    struct Admission: Comparable, Sendable {
        var priority: TransferPriority
        var ticket: UInt64

        static func < (lhs: Admission, rhs: Admission) -> Bool {
            (lhs.priority, lhs.ticket) < (rhs.priority, rhs.ticket)
        }
    }

    /// A ready task's entry in the heap of its kind.
    struct ReadyEntry: Comparable, Sendable {
        var admission: Admission
        var id: UInt32
        var stamp: UInt64

        static func < (lhs: ReadyEntry, rhs: ReadyEntry) -> Bool { lhs.admission < rhs.admission }
        static func == (lhs: ReadyEntry, rhs: ReadyEntry) -> Bool { lhs.stamp == rhs.stamp && lhs.id == rhs.id }
    }

    /// A back-off's entry in the deadline heap.
    struct BackOffEntry: Comparable, Sendable {
        var deadline: Instant
        var id: UInt32

        static func < (lhs: BackOffEntry, rhs: BackOffEntry) -> Bool { lhs.deadline < rhs.deadline }
    }

    struct ArmedTimer: Sendable {
        var deadline: Instant
        var generation: UInt64
    }

    /// The default of `MaxRunningTasks`, as aria2's `max-concurrent-downloads`.
    package static var defaultMaxRunningTasks: UInt32 { 5 }

    var tasks: [UInt32: ScheduledTask] = [:]
    var lastTicket: UInt64 = 0
    var timer: ArmedTimer?
    var lastGeneration: UInt64 = 0
    /// The ready tasks of each kind, first to be admitted on top (stale entries included, skipped lazily).
    var ready: [Kind: BinaryHeap<ReadyEntry>] = [:]
    var lastReadyStamp: UInt64 = 0
    /// Every back-off, earliest first (entries of back-offs that were forgotten included, skipped lazily).
    var backOffs = BinaryHeap<BackOffEntry>()
    /// The tasks whose attempt is transferring.
    var transferring: Set<UInt32> = []
    /// How many of ``transferring`` are foreground tasks.
    var foregroundTransferring = 0
    /// Attempts in flight, stopping ones included.
    var inFlight = 0
    /// Task entries looked at so far, by every event: what a test reads to prove that an event's work does not grow
    /// with the number of tasks.
    package internal(set) var visits: UInt64 = 0

    /// How many attempts may be in flight at once (0: no limit).
    package internal(set) var maxRunningTasks: UInt32
    package internal(set) var networkState: NetworkState
    package internal(set) var isMetered: Bool
    package internal(set) var isPowerSaver: Bool
    /// Between `PrepareForSleep(true)` and `PrepareForSleep(false)`.
    package internal(set) var isPreparingForSleep = false

    /// Creates a scheduler without tasks. The defaults are those of a machine without NetworkManager or
    /// power-profiles-daemon: nothing waits but for a slot.
    package init(
        maxRunningTasks: UInt32 = defaultMaxRunningTasks,
        networkState: NetworkState = .unknown,
        isMetered: Bool = false,
        isPowerSaver: Bool = false
    ) {
        self.maxRunningTasks = maxRunningTasks
        self.networkState = networkState
        self.isMetered = isMetered
        self.isPowerSaver = isPowerSaver
    }

    // MARK: - Queries

    /// What the scheduler knows of the task `id`, or nil for a task it does not know (or that was removed).
    package func task(_ id: UInt32) -> ScheduledTask? {
        tasks[id].flatMap { $0.isRemoved ? nil : $0 }
    }

    /// The task's `WaitingFor` (nil is `""`).
    package func waitingFor(_ id: UInt32) -> WaitingFor? {
        task(id)?.waitingFor
    }

    /// Every task in the order it joined the queue: what to save, so that adding the tasks in this order after a
    /// restart gives the same queue. A task joins at the end when it is added, resumed or given another priority.
    package var queueOrder: [UInt32] {
        tasks.filter { !$0.value.isRemoved }.sorted { $0.value.ticket < $1.value.ticket }.map { $0.key }
    }

    /// The tasks whose attempt is transferring, foreground first: what the indicator's `ActivityCount` counts (a
    /// queued task never shows the busy indicator) and, with their priorities, what `InhibitSleep` follows.
    package var runningTasks: [UInt32] {
        inAdmissionOrder(transferring)
    }

    /// How many attempts are transferring: the count of ``runningTasks``, kept.
    package var runningTaskCount: Int { transferring.count }

    /// Whether a foreground task's attempt is transferring (what `InhibitSleep` holds sleep off for).
    package var isForegroundTransferring: Bool { foregroundTransferring > 0 }

    /// How many attempts are in flight, stopping ones included: the sleep inhibitor may be released when this is 0.
    package var attemptsInFlight: Int { inFlight }

    /// Whether a failure of the task's attempt spends a retry. It does not when the scheduler asked the attempt to
    /// stop, nor when the network is offline or behind a portal and the task is not loopback: the failure is the
    /// network's, not the task's. Then the owner neither spends a retry nor fails the task, and reports
    /// ``attemptFailed(_:retryDelay:now:)`` without a delay: the task waits for the network and continues by itself.
    package func failureSpendsRetry(_ id: UInt32) -> Bool {
        guard let task = tasks[id] else { return true }
        if task.attempt == .stopping { return false }
        return task.isLoopback || networkState.allowsAttempts
    }

    /// `ids` in the order slots are given: foreground before background, then by ticket. (Closures, not key paths:
    /// in generic code a key path such as `\.0` is built by the runtime at every call.)
    func inAdmissionOrder(_ ids: some Sequence<UInt32>) -> [UInt32] {
        ids.compactMap { id in tasks[id].map { (id, $0.admission) } }.sorted { $0.1 < $1.1 }.map { $0.0 }
    }
}
