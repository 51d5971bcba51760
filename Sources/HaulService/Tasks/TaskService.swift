import CGlibcExtras
import DBusKit
import FoundationEssentials
import Glibc
import HaulContract
import HaulCore
import HaulTransfer
import Logging
import ServiceKit

/// Runs transfers on the bus: one `org.haul.Haul1.Task` object per task, all driven by one pure machine, the
/// `TransferQueue` (every task's lifecycle, its crash-loop guard and the scheduler); the actions it returns (start or
/// stop an attempt, arm its timer, persist, publish, signal) are carried out here, in order, by `perform`. Records
/// are saved on every state change, so a restart finds every task as it was.
///
/// As in every service, a change is applied and its effects queued with no `await` in between: what goes on the bus
/// (exports, property changes, signals) goes through ServiceKit's `Outbox`, which `run()` drains, so another call can
/// never run between two effects of one change (a `Forget` between a task's last
/// `PropertiesChanged` and its `TaskDidComplete` once dropped the signal). A method answers once what it caused
/// is on the bus.
actor TaskService {
    let objects: any ServiceBus
    private let indicator: ActivityIndicatorService
    let attempts: any AttemptRunner
    private let store: TaskStore
    /// Saves records and settings off the actor, in group commits: only a new task's reply waits for the disk.
    let records: TaskRecordWriter
    /// Removes and empties partial files off the actor.
    let partialFiles: PartialFiles
    let logger: Logger
    /// Retry timers, the progress ticker and the machines' `now`.
    let clock: any ServiceClock
    var tasks: [UInt32: ManagedTask] = [:]
    /// `tasks` by the path each names; kept wherever a task is added, forgotten or named.
    var paths = TaskPaths()
    var isShuttingDown = false
    /// The Manager's read-write settings (`DefaultConnections`, the rate limits), saved in `settingsURL`.
    var settings: ManagerSettings
    let settingsURL: URL
    /// The rate limits as the connections see them, shared with the attempt runner: the Manager's are set here, and a
    /// task's own when it changes mid-transfer.
    let rates: RateGate
    private(set) var nextID: UInt32 = 1
    /// Ids of the records found at start (loadable or not) and the highest forgotten one: never given again.
    private var restoredIDs: Set<UInt32> = []
    private var ticker: Task<Void, Never>?
    /// Which task does what next: every task's lifecycle, and which may transfer now.
    var queue: TaskQueue
    /// The queue's one timer: the earliest retry back-off.
    private var queueTimer: Task<Void, Never>?
    /// logind's inhibitors, when hauld reaches the system bus.
    var sleepInhibitor: SleepInhibitor?
    /// What was last asked of `sleepInhibitor`.
    var heldInhibitors = (delay: false, block: false)
    /// What goes on the bus, in the order the state changed: `run()` sends it, `settled()` waits for it.
    let outbox = Outbox<TaskPublication>()
    /// What every task object exports but its properties.
    private lazy var taskInterface = Self.taskInterface(of: self)

    /// `attempts` runs the transfers (`TransferAttempts` in hauld) under `rates`; `clock` is hauld's `EventLoopClock`
    /// unless a test moves time by hand.
    init(
        objects: any ServiceBus, indicator: ActivityIndicatorService, attempts: any AttemptRunner,
        rates: RateGate = RateGate(), store: TaskStore, records: TaskRecordWriter? = nil,
        partialFiles: PartialFiles = PartialFiles(), settingsURL: URL, clock: any ServiceClock = EventLoopClock(),
        logger: Logger
    ) {
        self.objects = objects
        self.indicator = indicator
        self.attempts = attempts
        self.rates = rates
        self.store = store
        self.clock = clock
        self.records = records ?? TaskRecordWriter(store: store)
        self.partialFiles = partialFiles
        self.logger = logger
        self.settingsURL = settingsURL
        let (settings, problem) = ManagerSettings.load(from: settingsURL)
        self.settings = settings
        queue = TaskQueue(maxRunningTasks: settings.maxRunningTasks)
        rates.setGlobalLimit(settings.downloadRateLimit, for: .download)
        rates.setGlobalLimit(settings.uploadRateLimit, for: .upload)
        if let problem { logger.warning("\(problem)") }
    }

    // MARK: Restoring and stopping

    /// A restored task as `InterfacesAdded` would show it: its object path and every property.
    typealias RestoredTask = (path: ObjectPath, properties: [String: DBusValue])

    /// Exports every saved task in the state it had. Nothing starts yet: see `continueRestored()`.
    ///
    /// Called before hauld owns its name, when no client following `org.haul.Haul1` can hear an `InterfacesAdded`
    /// (the bus routes a signal to a rule naming a well-known sender only while the sender owns that name): none is
    /// sent, which spares ten thousand signals at every start. Clients read the tasks with `GetManagedObjects` once the
    /// name appears; the desktop bridge, which hears hauld's signals in-process, is handed them, a batch at a time, by
    /// `handOver`.
    func restore(handingTo handOver: (@Sendable ([RestoredTask]) async -> Void)? = nil) async {
        let listing = store.listing()
        for problem in listing.problems { logger.warning("skipping the saved tasks: \(problem)") }
        nextID = store.nextID(taken: listing.takenIDs)
        restoredIDs = listing.takenIDs
        tasks.reserveCapacity(listing.ids.count)
        var reader = RestoreReader(store: store, ids: listing.ids, batchSize: Self.batch)
        var count = 0
        while let batch = await reader.next() {
            for problem in batch.problems { logger.warning("skipping a saved task: \(problem)") }
            var restored: [RestoredTask] = []
            for loaded in batch.tasks {
                let task = loaded.task
                let record = task.record
                queue.restore(
                    record.id, state: record.state, outcome: record.outcome,
                    crashLoop: CrashLoopGuard(interruptedRuns: record.interruptedRuns, notice: record.notice),
                    traits: loaded.traits, queuePosition: record.queuePosition, maxRetries: record.maxRetries
                )
                if let notice = queue.entry(record.id)?.crashLoop.notice, notice != record.notice {
                    logger.warning("task \(record.id) is suspended: \(notice)")
                }
                tasks[record.id] = task
                paths.insert(record.id, at: record.path)
                let properties = export(task, announced: false)
                if handOver != nil { restored.append((task.path, properties)) }
            }
            count += batch.tasks.count
            await settled()
            await handOver?(restored)
        }
        if count > 0 { logger.info("restored \(count) task(s)") }
    }

    /// Continues the restored tasks in their saved order. Called once hauld owns the bus name: a second hauld that
    /// fails to get it must not touch the partial files the first one is writing. A batch at a time, so that calls
    /// are answered meanwhile however many tasks there are.
    ///
    /// Calls may come between two batches: a task a client suspended or cancelled first is not started.
    func continueRestored() async {
        var sent = SentBatches()
        for (index, id) in queue.restoredOrder().enumerated() {
            guard !isShuttingDown else { return }
            perform(queue.continueRestored(id, now: clock.now))
            if index % Self.batch == Self.batch - 1 { await batchSent(&sent) }
        }
        await settled()
        // Reading, decoding and exporting every record freed room that glibc keeps until it is trimmed.
        malloc_trim(0)
    }

    /// How many tasks one turn of a restore or a `*All` handles before it lets other calls in, and waits for what it
    /// published to be sent: what waits in the outbox (every property of a restored task) stays small however many
    /// tasks there are.
    static var batch: Int { 256 }

    /// Where a `*All` or the continuing of a restore stands with the batches it sent: the last one, until the object
    /// server has it, and the one before, until the bus has read it.
    struct SentBatches {
        fileprivate var carrying: OutboxMark?
        fileprivate var writing: DBusConnection.WriteMark?
    }

    /// The end of a batch of a `*All` or of continuing a restore: waits until the object server has the batch before
    /// it, and the bus has read the one before that.
    ///
    /// Without these waits, ten thousand tasks' signals queued up faster than the bus read them, and an answer to
    /// another client, queued behind them all, waited most of a second. Waiting for the batch itself instead made
    /// each stage wait for the next: the bus read nothing while the service made a batch, and the service made
    /// nothing while the bus read one. With a batch between each stage and the next, the service makes one while the
    /// object server encodes the one before and the bus reads the one before that, and an answer still waits behind
    /// a few batches at most.
    private func batchSent(_ sent: inout SentBatches) async {
        let carrying = outbox.mark()
        defer { sent.carrying = carrying }
        guard let previous = sent.carrying else { return }
        await previous.reached()
        let handed = await objects.writeMark()
        defer { sent.writing = handed }
        if let writing = sent.writing { await objects.written(through: writing) }
    }

    /// Stops every attempt without touching the saved states, so that the next start continues them all.
    func shutdown() async {
        isShuttingDown = true
        ticker?.cancel()
        queueTimer?.cancel()
        for task in tasks.values { task.attempt?.cancel() }
        for task in tasks.values { await task.attempt?.value }
        // A clean stop: no task counts toward the crash-loop guard any more.
        perform(queue.ownerStoppingCleanly())
        await settled()
        outbox.finish()
        await records.flush()
        await partialFiles.done()
        await attempts.shutdown()
    }

    // MARK: Manager requests

    func download(url: TransferURL, destination: DownloadDestination, options: DownloadOptions)
        async throws(DBusError) -> ObjectPath
    {
        try checkDestination(destination, overwrite: options.overwrite)
        var options = options
        options.connections = options.connections ?? settings.defaultConnections
        let record = TaskRecord(id: nextID, download: url, to: destination, options: options, createdAt: Date())
        return try await add(record, startSuspended: options.startSuspended)
    }

    func upload(url: TransferURL, source: LocalPath, options: UploadOptions) async throws(DBusError) -> ObjectPath {
        try HaulErrorName.mapping { () throws(TransferFailure) in try LocalFileChecks.source(source.path) }
        let record = TaskRecord(id: nextID, upload: source, to: url, options: options, createdAt: Date())
        return try await add(record, startSuspended: false)
    }

    func list() -> [ObjectPath] { tasks.keys.sorted().compactMap { tasks[$0]?.path } }

    /// Applies `command` to every task (`SuspendAll`, `ResumeAll`, `CancelAll`), a batch at a time; a task it does
    /// not apply to (a completed one) is passed over.
    func forEachTask(_ command: TaskCommand) async {
        // The records are written once the changes are on the bus, not on the same two cores meanwhile.
        records.hold()
        defer { records.release() }
        var sent = SentBatches()
        for (index, id) in order(of: command).enumerated() {
            try? apply(command, on: id)
            if index % Self.batch == Self.batch - 1 { await batchSent(&sent) }
        }
        await settled()
        if command == .cancel { await partialFiles.done() }
    }

    /// The order `forEachTask` takes the tasks in: by id, but a command that stops tasks takes the transferring ones
    /// last. A slot a stopped attempt frees (once it has ended, during the wait after a batch) would otherwise go to a
    /// queued task that a later batch stops again: a connection opened only to be closed, five a batch.
    private func order(of command: TaskCommand) -> [UInt32] {
        let ids = tasks.keys.sorted()
        guard command == .suspend || command == .cancel else { return ids }
        return ids.filter { !queue.isTransferring($0) } + ids.filter { queue.isTransferring($0) }
    }

    private func add(_ record: TaskRecord, startSuspended: Bool) async throws(DBusError) -> ObjectPath {
        nextID = store.nextID(after: record.id) { tasks[$0] != nil || restoredIDs.contains($0) }
        let task = ManagedTask(record: record)
        // Durable before it exists on the bus; other calls go on meanwhile, and new tasks share the disk's syncs.
        do {
            try await records.commit(task.record)
        } catch {
            throw HaulErrorName.permissionDenied.error("cannot save the task in \(store.directory.path): \(error)")
        }
        // What changed meanwhile: hauld began to stop, or another new task took the same file (a folder's tasks are
        // named apart later).
        if isShuttingDown {
            records.remove(id: record.id) { _ in }
            throw DBusError.failed("hauld is stopping")
        }
        if record.kind == .download, !record.awaitsName, holdsUnfinishedTask(at: record.path) {
            records.remove(id: record.id) { _ in }
            throw HaulErrorName.fileExists.error("another task is already downloading to \(record.path)")
        }
        task.probe.set(bytes: 0, expected: -1)
        tasks[record.id] = task
        paths.insert(record.id, at: record.path)
        // In the queue before it is exported, so that its first `State` already says whether it runs or is queued.
        let actions = queue.add(
            record.id, traits: task.traits, maxRetries: record.maxRetries, startSuspended: startSuspended,
            now: clock.now
        )
        export(task)
        perform(actions)
        await settled()
        return task.path
    }

    // MARK: Read-write properties

    /// A task's `Connections`: 1 to 16, for its next attempt (a running transfer keeps its connections until it
    /// is suspended and resumed, or retried).
    func setConnections(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .uint32(let connections) = value, DownloadOption.connectionRange.contains(connections) else {
            throw .invalidArgs("\(TaskProperty.connections.name) must be a u \(Self.connectionRangeText)")
        }
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard queue.entry(id)?.lifecycle.state != .completed else {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
        guard task.record.kind == .download else {
            throw .invalidArgs("Connections applies to downloads; task \(id) is an upload")
        }
        tasks[id]?.record.connections = connections
        persist(id)
        publish(id, TaskProperty.values([.connections: .uint32(connections)]))
        await settled()
    }

    /// "between 1 and 16"
    static var connectionRangeText: String {
        "between \(DownloadOption.connectionRange.lowerBound) and \(DownloadOption.connectionRange.upperBound)"
    }

    // MARK: Task commands

    enum TaskCommand: Sendable { case suspend, resume, cancel, retry }

    func run(_ command: TaskCommand, on id: UInt32) async throws(DBusError) {
        try apply(command, on: id)
        await settled()
        // A cancelled download's partial file is gone once the call answers; no other command waits for the files.
        if command == .cancel { await partialFiles.done() }
    }

    private func apply(_ command: TaskCommand, on id: UInt32) throws(DBusError) {
        guard tasks.index(forKey: id) != nil else { throw HaulErrorName.notFound.error("no task \(id)") }
        let now = clock.now
        let actions: [TaskQueue.Action]
        do {
            switch command {
            case .suspend: actions = try queue.suspend(id, now: now)
            case .resume: actions = try queue.resume(id, now: now)
            case .cancel: actions = try queue.cancel(id, now: now)
            case .retry: actions = try queue.retry(id, now: now)
            }
        } catch {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
        perform(actions)
    }

    func forget(_ id: UInt32) async throws(DBusError) {
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard queue.forget(id) else {
            let state = queue.publicState(of: id).map { TaskStateName($0).rawValue } ?? "unknown"
            throw HaulErrorName.taskNotCompleted.error("task \(id) is \(state); cancel it first")
        }
        tasks[id] = nil
        tasks.shrinkIfSparse()
        paths.remove(id, at: task.record.path)
        records.remove(id: id) { [logger] error in
            logger.warning("cannot remove the record of forgotten task \(id): \(error)")
        }
        outbox.send(.unexport(task.path))
        await settled()
    }

    // MARK: Actions

    /// Carries out what the queue decided, in its order, with no `await` in between.
    func perform(_ actions: [TaskQueue.Action]) {
        for action in actions {
            switch action {
            case .stopAttempt(let id):
                // Its report (`attemptEnded`) frees the slot.
                tasks[id]?.attempt?.cancel()
            case .removePartialFile(let id):
                withTask(id) { task in
                    guard task.record.kind == .download else { return }
                    partialFiles.remove(task.partialPath)
                    task.record.segments = nil
                    task.probe.set(bytes: 0)
                }
            case .persist(let id):
                persist(id)
            case .publishState(let id, let shown):
                publishState(id, shown)
            case .emitDidResume(let id):
                emitManagerSignal(.taskDidResume, id)
            case .emitDidSuspend(let id):
                emitManagerSignal(.taskDidSuspend, id)
            case .emitDidComplete(let id, let outcome):
                emitManagerSignal(.taskDidComplete, id, outcome: outcome)
            case .startAttempt(let id, _):
                startAttempt(id)
            case .armTimer(let deadline, let generation):
                queueTimer?.cancel()
                queueTimer = clock.timer(at: deadline) { [weak self] in await self?.queueTimerFired(generation) }
            case .cancelTimer:
                queueTimer?.cancel()
                queueTimer = nil
            case .runningCountChanged(let count):
                // Only transferring tasks count in the indicator's `ActivityCount`.
                outbox.send(.runningTasks(UInt32(clamping: count)))
                if count > 0 { startTicker() }
            }
        }
        followInhibitors()
    }

    private func queueTimerFired(_ generation: UInt64) {
        perform(queue.timerFired(generation: generation, now: clock.now))
    }

    /// Saves task `id`'s record soon; `erasingPrevious` when the change took a secret out of it (see
    /// ``TaskRecord/mayHoldSecrets``).
    func persist(_ id: UInt32, erasingPrevious: Bool = false) {
        keep(id) { task, _ in
            // A plan says which bytes the partial file holds: the file's data goes to disk before it.
            let syncing = task.record.segments == nil ? nil : task.partialPath
            records.save(task.record, syncing: syncing, erasingPrevious: erasingPrevious) { [logger] error in
                logger.error("could not save task \(id): \(error)")
            }
        }
    }

    /// Copies the queue's entry of task `id` into its record, in place (a `*All` does it 20,000 times), and hands
    /// `body` the task and its entry; nothing for a task the service or the queue does not hold.
    private func keep(_ id: UInt32, _ body: (ManagedTask, TaskQueue.Entry) -> Void) {
        guard let entry = queue.entry(id) else { return }
        withTask(id) { task in
            task.keep(entry)
            body(task, entry)
        }
    }

    /// Task `id` in place, for `body` to read or change (it must not touch `tasks`), or nil for a task the service
    /// does not hold. A read of `tasks[id]` copies the task, retaining and releasing every string and table of its
    /// record: a `*All` used to copy each task five times.
    @discardableResult
    private func withTask<T>(_ id: UInt32, _ body: (inout ManagedTask) -> T) -> T? {
        guard let index = tasks.index(forKey: id) else { return nil }
        return body(&tasks.values[index])
    }

    private func publishState(_ id: UInt32, _ shown: TaskQueue.PublicState) {
        keep(id) { task, entry in
            let rate = queue.isTransferring(id) ? task.meter.rate(now: clock.now) : 0
            outbox.send(.allTaskProperties(task.propertyValues(entry, shown, rate: rate), at: task.path))
        }
    }

    /// Every property of the task as it stands, or nil for a task the service does not hold.
    func properties(of id: UInt32) -> [String: DBusValue]? {
        guard let task = tasks[id], let entry = queue.entry(id), let shown = queue.publicState(of: id) else {
            return nil
        }
        return task.properties(entry, shown)
    }

    private func emitManagerSignal(_ signal: ManagerSignal, _ id: UInt32, outcome: TransferOutcome? = nil) {
        guard let path = withTask(id, { $0.path }) else { return }
        var body: [DBusValue] = [.objectPath(path)]
        if let outcome {
            let failure = outcome.failure
            body += [
                .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? ""),
                .string((failure?.message ?? "").busSafe),
            ]
        }
        outbox.send(.managerSignal(member: signal.rawValue, body: body))
    }

    // MARK: Publishing

    /// Exports the task with its properties, which it returns. `announced`: see `restore(handingTo:)` for the tasks
    /// that are not.
    @discardableResult
    private func export(_ task: ManagedTask, announced: Bool = true) -> [String: DBusValue] {
        var interface = taskInterface
        interface.properties = properties(of: task.record.id) ?? [:]
        outbox.send(.export(interface, at: task.path, announced: announced))
        return interface.properties
    }

    /// The task interface with its handlers, built once and shared by every task object (ten thousand tasks would
    /// otherwise hold ten thousand copies of each): a call finds its task by its object path.
    private static func taskInterface(of service: TaskService) -> DBusExportedInterface {
        // The service and the id of the task a call is for; weak, as the service holds this interface.
        let target: @Sendable (DBusMethodCall) throws(DBusError) -> (TaskService, UInt32) = {
            [weak service] call throws(DBusError) in
            guard let service else { throw DBusError.failed("hauld is stopping") }
            guard let id = HaulBus.taskID(of: call.path) else {
                throw HaulErrorName.notFound.error("no task \(call.path)")
            }
            return (service, id)
        }
        let command = { (command: TaskCommand) -> DBusExportedInterface.MethodHandler in
            { call in
                let (tasks, id) = try target(call)
                try await tasks.run(command, on: id)
                return []
            }
        }
        return DBusExportedInterface(
            HaulInterfaces.task,
            methods: TaskMethod.handlers([
                .suspend: command(.suspend),
                .resume: command(.resume),
                .retry: command(.retry),
                .cancel: command(.cancel),
                .forget: { call in let (tasks, id) = try target(call); try await tasks.forget(id); return [] },
                .setURL: { call in
                    let (tasks, id) = try target(call)
                    try await tasks.setURL(call.arguments.first?.stringValue ?? "", of: id)
                    return []
                },
            ]),
            setProperty: { name, value, call in
                let (tasks, id) = try target(call)
                // The object server lets through writes of read-write properties only.
                switch TaskProperty(rawValue: name) {
                case .connections: try await tasks.setConnections(value, of: id)
                case .rateLimit: try await tasks.setRateLimit(value, of: id)
                case .priority: try await tasks.setPriority(value, of: id)
                case .allowMetered: try await tasks.setAllowMetered(value, of: id)
                default: break
                }
            }
        )
    }

    func publish(_ id: UInt32, _ properties: [String: DBusValue]) {
        guard let path = withTask(id, { $0.path }) else { return }
        outbox.send(.taskProperties(properties, at: path))
    }

    /// Returns once everything queued so far is on the bus, or at once when the outbox has ended (after
    /// `shutdown()`: a system service's last report may come later).
    func settled() async {
        await outbox.settled()
    }

    /// Sends the outbox's publications in order, until `shutdown()` ends it (or the calling task is cancelled).
    nonisolated func run() async {
        await outbox.runInBatches { publications, _ in await send(publications) }
    }

    /// Hands the object server the changes among `publications` in one go, each run of them up to the next running
    /// task count, which goes to the indicator in its turn.
    private nonisolated func send(_ publications: [TaskPublication]) async {
        var pending: [(publication: TaskPublication, change: DBusObjectChange)] = []
        for publication in publications {
            if let change = publication.objectChange {
                pending.append((publication, change))
            } else if case .runningTasks(let count) = publication {
                await apply(pending)
                pending = []
                await indicator.setRunningTaskCount(count)
            }
        }
        await apply(pending)
    }

    private nonisolated func apply(_ pending: [(publication: TaskPublication, change: DBusObjectChange)]) async {
        guard !pending.isEmpty else { return }
        for failure in await objects.apply(pending.map(\.change)) {
            logger.error("could not publish \(pending[failure.index].publication): \(failure.error)")
        }
    }

    /// How often the ticker publishes running tasks' progress: ten times a second, the most the contract allows.
    static let progressInterval = Duration.milliseconds(100)
    /// Once a second while every transferring task is held to a rate limit. Such a transfer is what a laptop runs
    /// for hours in the background, and each publication wakes hauld's threads several times (the bus connection's
    /// thread, the desktop bridge), besides the bus and every client: at 5 MiB/s, ten publications a second cost hauld
    /// seven times the wake-ups of the limit itself (measured while the bridge still heard them through the bus), one
    /// a second less than one.
    static let limitedProgressInterval = Duration.seconds(1)
    /// How much later than ``limitedProgressInterval`` a tick may come: a grant's period and the limiter's grid, within
    /// which the limited connections' timer fires at least once while they wait for it. hauld's clock lets the tick
    /// ride that firing (`EventLoopClock`), so that it costs no wake-up of its own: one a second of the five or six a
    /// download held to a limit makes.
    static let limitedProgressTolerance = RateGate.Limiter.roundPeriod + RateGate.Limiter.wakeUpGrid
    /// How often a running segmented download's plan is saved, at most: each save syncs the partial file's data and
    /// writes the record (three syncs), which once a second cost a download held to 5 MiB/s over four connections
    /// half of all its wake-ups. A crash costs each segment what came in since the last save (five seconds of
    /// transfer, and the MiB its connections post plans at); an attempt's end always saves its last plan.
    static let planSaveInterval = Duration.seconds(5)
    /// The same while the task is held to a rate limit, a transfer that runs for hours on a laptop's battery. There a
    /// save woke hauld about 18 times (the `fdatasync` waits for each write-out the connections started): every 5 s,
    /// two fifths of the steady wake-ups of a download held to 5 MiB/s over four connections. A crash then costs
    /// each segment at most 30 s of the limit (aria2c saves its control file every 60 s).
    static let limitedPlanSaveInterval = Duration.seconds(30)

    /// Publishes running tasks' progress every ``progressInterval`` (or ``limitedProgressInterval``) — the coalescing
    /// the contract promises — and stops when nothing runs, so an idle daemon has no timer.
    func startTicker() {
        guard ticker == nil else { return }
        let first = progressInterval()
        ticker = Task { [weak self, clock] in
            var interval = first
            while !Task.isCancelled {
                let tolerance = interval == Self.limitedProgressInterval ? Self.limitedProgressTolerance : nil
                try? await clock.sleep(for: interval, tolerance: tolerance)
                guard let self, let next = await self.tick() else { break }
                interval = next
            }
            // The transfers' buffers were freed into glibc's per-thread arenas, which keep them (about 3 MB after
            // 200 downloads): an idle daemon hands them back to the system.
            malloc_trim(0)
        }
    }

    /// Publishes the progress of every transferring task; returns when to tick next, or nil when nothing runs.
    private func tick() -> Duration? {
        let now = clock.now
        var anyRunning = false
        var allLimited = true
        for id in queue.scheduler.runningTasks {
            guard var task = tasks[id], let entry = queue.entry(id), let shown = queue.publicState(of: id) else {
                continue
            }
            anyRunning = true
            let limited = isRateLimited(task)
            allLimited = allLimited && limited
            _ = task.meter.record(bytes: task.probe.reading.bytes, now: now)
            tasks[id]?.meter = task.meter
            if task.nextPlanSave.map({ now >= $0 }) ?? true, let plan = task.plans.takeNew() {
                tasks[id]?.record.segments = plan
                let interval = limited ? Self.limitedPlanSaveInterval : Self.planSaveInterval
                tasks[id]?.nextPlanSave = now.advanced(by: interval)
                persist(id)
            }
            outbox.send(
                .allTaskProperties(task.propertyValues(entry, shown, rate: task.meter.rate(now: now)), at: task.path)
            )
        }
        guard anyRunning else {
            ticker = nil
            return nil
        }
        return allLimited ? Self.limitedProgressInterval : Self.progressInterval
    }

    /// ``limitedProgressInterval`` when every transferring task is held to a rate limit, ``progressInterval``
    /// otherwise (and when none transfers yet).
    private func progressInterval() -> Duration {
        let transferring = queue.scheduler.runningTasks.compactMap { tasks[$0] }
        let allLimited = !transferring.isEmpty && transferring.allSatisfy(isRateLimited)
        return allLimited ? Self.limitedProgressInterval : Self.progressInterval
    }

    /// Whether `task` is held to a rate limit: its own, or the Manager's for its direction.
    private func isRateLimited(_ task: ManagedTask) -> Bool {
        let global = task.record.kind == .download ? settings.downloadRateLimit : settings.uploadRateLimit
        return task.record.rateLimit > 0 || global > 0
    }
}
