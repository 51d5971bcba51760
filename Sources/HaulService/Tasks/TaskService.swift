import CGlibcExtras
import DBusKit
import FoundationEssentials
import Glibc
import HaulContract
import HaulCore
import HaulTransfer
import Logging
package import ServiceKit

/// Runs transfers on the bus: one `org.haul.Haul1.Task` object per task, each driven by its pure
/// lifecycle machine; the actions it returns (start or stop an attempt, arm a retry, persist, publish, signal)
/// are carried out here. Records are saved on every state change, so a restart finds every task as it was.
///
/// As in `ActivityIndicatorService`, a change is applied and its effects queued with no `await` in between:
/// what goes on the bus (exports, property changes, signals) goes through an ordered outbox that `publish()`
/// drains, so another call can never run between two effects of one change (a `Forget` between a task's last
/// `PropertiesChanged` and its `TaskDidComplete` once dropped the signal). A method answers once what it caused
/// is on the bus.
actor TaskService {
    let objects: DBusObjectServer
    private let indicator: ActivityIndicatorService
    let attempts: any AttemptRunner
    private let store: TaskStore
    /// Saves records off the actor: replies do not wait for the disk.
    let records: TaskRecordWriter
    let logger: Logger
    /// Retry timers, the progress ticker and the machines' `now`.
    let clock: any ServiceClock
    var tasks: [UInt32: ManagedTask] = [:]
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
    /// Which tasks may transfer now (`MaxRunningTasks`), and why the others wait.
    var scheduler: Scheduler
    /// The scheduler's one timer: the earliest retry back-off.
    var schedulerTimer: Task<Void, Never>?
    /// The transferring tasks last told to the activity indicator.
    var lastRunningCount = 0
    /// The highest ``TaskRecord/queuePosition`` given.
    var lastQueuePosition: UInt64 = 0
    /// While restored tasks join the scheduler in their saved order, keeping their positions.
    var isRestoring = false
    /// logind's inhibitors, when hauld reaches the system bus.
    var sleepInhibitor: SleepInhibitor?
    /// What was last asked of `sleepInhibitor`.
    var heldInhibitors = (delay: false, block: false)
    private let outbox: AsyncStream<TaskPublication>
    let outboxInput: AsyncStream<TaskPublication>.Continuation

    /// `attempts` runs the transfers (`TransferAttempts` in hauld) under `rates`; `clock` is hauld's `EventLoopClock`
    /// unless a test moves time by hand.
    init(
        objects: DBusObjectServer, indicator: ActivityIndicatorService, attempts: any AttemptRunner,
        rates: RateGate = RateGate(), store: TaskStore, settingsURL: URL, clock: any ServiceClock = EventLoopClock(),
        logger: Logger
    ) {
        self.objects = objects
        self.indicator = indicator
        self.attempts = attempts
        self.rates = rates
        self.store = store
        self.clock = clock
        records = TaskRecordWriter(store: store)
        self.logger = logger
        self.settingsURL = settingsURL
        let (settings, problem) = ManagerSettings.load(from: settingsURL)
        self.settings = settings
        scheduler = Scheduler(maxRunningTasks: settings.maxRunningTasks)
        rates.setGlobalLimit(settings.downloadRateLimit, for: .download)
        rates.setGlobalLimit(settings.uploadRateLimit, for: .upload)
        if let problem { logger.warning("\(problem)") }
        (outbox, outboxInput) = AsyncStream.makeStream(of: TaskPublication.self)
    }

    // MARK: Restoring and stopping

    /// Exports every saved task in the state it had. Nothing starts yet: see `continueRestored()`.
    func restore() async {
        let contents = store.loadAll()
        let records = contents.records
        for problem in contents.problems { logger.warning("skipping a saved task: \(problem)") }
        nextID = store.nextID(taken: contents.takenIDs)
        restoredIDs = contents.takenIDs
        for record in records {
            let machine = ManagedTask.Machine(
                restoring: record.state, outcome: record.outcome, interruptedRuns: record.interruptedRuns,
                notice: record.notice, maxRetries: record.maxRetries
            )
            let task = ManagedTask(record: record, machine: machine)
            if record.kind == .download { task.probe.set(bytes: task.bytesOnDisk, expected: record.expectedTotal) }
            if let notice = machine.notice, notice != record.notice {
                logger.warning("task \(record.id) is suspended: \(notice)")
            }
            tasks[record.id] = task
            export(task)
        }
        if !records.isEmpty { logger.info("restored \(records.count) task(s)") }
        await published()
    }

    /// Continues the restored running tasks from their bytes on disk. Called once hauld owns the bus name:
    /// a second hauld that fails to get it must not touch the partial files the first one is writing.
    func continueRestored() async {
        // What restoring changed (the crash-loop guard's counts, a task it suspended) is on disk before any attempt
        // starts, so that a crash in one is counted.
        for id in tasks.keys.sorted() {
            if var task = tasks[id], task.recordLifecycle() { persist(id) }
        }
        await records.flush()
        // They join the scheduler's queue in the order they had.
        lastQueuePosition = tasks.values.map(\.record.queuePosition).max() ?? 0
        isRestoring = true
        let order = tasks.values.sorted {
            ($0.record.queuePosition, $0.record.id) < ($1.record.queuePosition, $1.record.id)
        }
        for id in order.map(\.record.id) {
            guard var task = tasks[id] else { continue }
            let actions = task.machine.start(now: clock.now)
            tasks[id] = task
            perform(actions, for: id)
        }
        isRestoring = false
        await published()
    }

    /// Stops every attempt without touching the saved states, so that the next start continues them all.
    func shutdown() async {
        isShuttingDown = true
        ticker?.cancel()
        schedulerTimer?.cancel()
        for task in tasks.values { task.attempt?.cancel() }
        for task in tasks.values { await task.attempt?.value }
        // A clean stop: no task counts toward the crash-loop guard any more.
        for id in tasks.keys.sorted() {
            guard let actions = tasks[id]?.machine.ownerStoppingCleanly(), !actions.isEmpty else { continue }
            perform(actions, for: id)
        }
        await published()
        outboxInput.finish()
        await records.flush()
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

    func forEachTask(_ command: TaskCommand) async {
        for id in tasks.keys.sorted() { try? apply(command, on: id) }
        await published()
    }

    private func add(_ record: TaskRecord, startSuspended: Bool) async throws(DBusError) -> ObjectPath {
        nextID = store.nextID(after: record.id) { tasks[$0] != nil || restoredIDs.contains($0) }
        var task = ManagedTask(record: record, machine: ManagedTask.Machine(maxRetries: record.maxRetries))
        do {
            try store.save(task.record)
        } catch {
            throw HaulErrorName.permissionDenied.error("cannot save the task in \(store.directory.path): \(error)")
        }
        task.probe.set(bytes: 0, expected: -1)
        let actions = startSuspended ? [] : task.machine.start(now: clock.now)
        tasks[record.id] = task
        // In the queue before it is exported, so that its first `State` already says whether it runs or is queued;
        // what the scheduler decided is carried out once the machine's own actions are.
        let joining = startSuspended ? [] : join(task, suspended: false)
        export(task)
        if startSuspended {
            persist(record.id)
        } else {
            perform(actions, for: record.id)
            schedule(joining, for: record.id)
        }
        await published()
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
        guard task.machine.state != .completed else { throw HaulErrorName.taskCompleted.error("task \(id) has completed") }
        guard task.record.kind == .download else {
            throw .invalidArgs("Connections applies to downloads; task \(id) is an upload")
        }
        tasks[id]?.record.connections = connections
        persist(id)
        publish(id, TaskProperty.values([.connections: .uint32(connections)]))
        await published()
    }

    /// "between 1 and 16"
    static var connectionRangeText: String {
        "between \(DownloadOption.connectionRange.lowerBound) and \(DownloadOption.connectionRange.upperBound)"
    }

    // MARK: Task commands

    enum TaskCommand: Sendable { case suspend, resume, cancel }

    func run(_ command: TaskCommand, on id: UInt32) async throws(DBusError) {
        try apply(command, on: id)
        await published()
    }

    private func apply(_ command: TaskCommand, on id: UInt32) throws(DBusError) {
        guard var task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        let actions: [ManagedTask.Machine.Action]
        do {
            switch command {
            case .suspend: actions = try task.machine.suspend(now: clock.now)
            case .resume: actions = try task.machine.resume(now: clock.now)
            case .cancel: actions = try task.machine.cancel(now: clock.now)
            }
        } catch {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
        tasks[id] = task
        perform(actions, for: id)
    }

    func forget(_ id: UInt32) async throws(DBusError) {
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard task.machine.state == .completed else {
            let state = TaskStateName(task.machine.state).rawValue
            throw HaulErrorName.taskNotCompleted.error("task \(id) is \(state); cancel it first")
        }
        tasks[id] = nil
        tasks.shrinkIfSparse()
        records.remove(id: id) { [logger] error in
            logger.warning("cannot remove the record of forgotten task \(id): \(error)")
        }
        outboxInput.yield(.unexport(task.path))
        await published()
    }

    // MARK: Actions

    /// Carries out what a task's machine decided, then brings the scheduler in line with it.
    func perform(_ actions: [ManagedTask.Machine.Action], for id: UInt32) {
        var stopsNothing = false
        for action in actions {
            guard tasks[id] != nil else { return }
            switch action {
            case .startTransfer:
                // The scheduler starts it when it may (`admit`); told now, so the state published next says whether
                // it runs or is queued.
                followLifecycle(id)
            case .stopTransfer:
                if let attempt = tasks[id]?.attempt { attempt.cancel() } else { stopsNothing = true }
            case .armRetryTimer(let deadline, let generation):
                tasks[id]?.pendingRetry = (generation, deadline)
            case .cancelRetryTimer:
                tasks[id]?.pendingRetry = nil
            case .removePartialFile:
                if let task = tasks[id], task.record.kind == .download {
                    unlink(task.partialPath)
                    tasks[id]?.record.segments = nil
                    task.probe.set(bytes: 0)
                }
            case .persist:
                persist(id)
            case .publishState:
                publishState(id)
            case .emitDidResume:
                emitManagerSignal(.taskDidResume, id)
            case .emitDidSuspend:
                emitManagerSignal(.taskDidSuspend, id)
            case .emitDidComplete(let outcome):
                emitManagerSignal(.taskDidComplete, id, outcome: outcome)
            }
        }
        // A queued task has no attempt to stop: it stopped at once, reported after what the machine said.
        if stopsNothing, var task = tasks[id] {
            let stopped = task.machine.transferStopped(now: clock.now)
            tasks[id] = task
            perform(stopped, for: id)
            return
        }
        followLifecycle(id)
    }

    func persist(_ id: UInt32) {
        guard var task = tasks[id] else { return }
        task.recordLifecycle()
        tasks[id] = task
        // A plan says which bytes the partial file holds: the file's data goes to disk before it.
        let syncing = task.record.segments == nil ? nil : task.partialPath
        records.save(task.record, syncing: syncing) { [logger] error in
            logger.error("could not save task \(id): \(error)")
        }
    }

    private func publishState(_ id: UInt32) {
        guard var task = tasks[id] else { return }
        task.recordLifecycle()
        tasks[id] = task
        let rate = task.machine.state == .running && isTransferring(id) ? task.meter.rate(now: clock.now) : 0
        publish(id, task.properties(rate: rate, waitingFor: waitingFor(id)))
    }

    private func emitManagerSignal(_ signal: ManagerSignal, _ id: UInt32, outcome: TransferOutcome? = nil) {
        guard let path = tasks[id]?.path else { return }
        var body: [DBusValue] = [.objectPath(path)]
        if let outcome {
            let failure = outcome.failure
            body += [
                .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? ""),
                .string((failure?.message ?? "").busSafe),
            ]
        }
        outboxInput.yield(.managerSignal(member: signal.rawValue, body: body))
    }

    // MARK: Publishing

    private func export(_ task: ManagedTask) {
        let id = task.record.id
        let interface = DBusExportedInterface(
            HaulInterfaces.task,
            methods: TaskMethod.handlers([
                .suspend: { [self] _ in try await self.run(.suspend, on: id); return [] },
                .resume: { [self] _ in try await self.run(.resume, on: id); return [] },
                .cancel: { [self] _ in try await self.run(.cancel, on: id); return [] },
                .forget: { [self] _ in try await self.forget(id); return [] },
                .setURL: { [self] call in
                    try await self.setURL(call.arguments.first?.stringValue ?? "", of: id)
                    return []
                },
            ]),
            properties: task.properties(waitingFor: waitingFor(id)),
            setProperty: { [self] name, value, _ in
                // The object server lets through writes of read-write properties only.
                switch TaskProperty(rawValue: name) {
                case .connections: try await self.setConnections(value, of: id)
                case .rateLimit: try await self.setRateLimit(value, of: id)
                case .priority: try await self.setPriority(value, of: id)
                case .allowMetered: try await self.setAllowMetered(value, of: id)
                default: break
                }
            }
        )
        outboxInput.yield(.export(interface, at: task.path))
    }

    func publish(_ id: UInt32, _ properties: [String: DBusValue]) {
        guard let path = tasks[id]?.path else { return }
        outboxInput.yield(.taskProperties(properties, at: path))
    }

    /// Returns once everything queued so far is on the bus, or at once when the outbox has ended (after
    /// `shutdown()`: a system service's last report may come later).
    func published() async {
        await withCheckedContinuation { continuation in
            if case .terminated = outboxInput.yield(.barrier(continuation)) { continuation.resume() }
        }
    }

    /// Sends the outbox's publications in order, until `shutdown()` ends it (or the calling task is cancelled).
    nonisolated func publishing() async {
        for await publication in outbox {
            await send(publication)
        }
    }

    private nonisolated func send(_ publication: TaskPublication) async {
        do {
            switch publication {
            case .export(let interface, let path):
                try await objects.export([interface], at: path)
            case .unexport(let path):
                try await objects.unexport(path)
            case .taskProperties(let properties, let path):
                try await objects.updateProperties(properties, interface: HaulBus.taskInterface, at: path)
            case .managerProperties(let properties):
                try await objects.updateProperties(
                    properties, interface: HaulBus.managerInterface, at: HaulBus.managerPath
                )
            case .managerSignal(let member, let body):
                try await objects.emitSignal(
                    path: HaulBus.managerPath, interface: HaulBus.managerInterface, member: member, body
                )
            case .runningTasks(let count):
                await indicator.setRunningTaskCount(count)
            case .barrier(let continuation):
                continuation.resume()
            }
        } catch {
            logger.error("could not publish \(publication): \(error)")
        }
    }

    /// How often the ticker publishes running tasks' progress: ten times a second, the most the contract allows.
    static let progressInterval = Duration.milliseconds(100)
    /// Once a second while every transferring task is held to a rate limit. Such a transfer is what a laptop runs
    /// for hours in the background, and each publication wakes hauld's threads five times or so (the bus connection's
    /// queue, and the desktop bridge's connection receiving it), besides the bus and every client: at 5 MiB/s, ten
    /// publications a second cost hauld seven times the wake-ups of the limit itself, one a second less than one.
    static let limitedProgressInterval = Duration.seconds(1)

    /// Publishes running tasks' progress every ``progressInterval`` (or ``limitedProgressInterval``) — the coalescing
    /// the contract promises — and stops when nothing runs, so an idle daemon has no timer.
    func startTicker() {
        guard ticker == nil else { return }
        let first = progressInterval()
        ticker = Task { [weak self, clock] in
            var interval = first
            while !Task.isCancelled {
                try? await clock.sleep(for: interval)
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
        for id in tasks.keys.sorted() {
            guard var task = tasks[id], task.machine.state == .running, isTransferring(id) else { continue }
            anyRunning = true
            allLimited = allLimited && isRateLimited(task)
            _ = task.meter.record(bytes: task.probe.reading.bytes, now: now)
            tasks[id]?.meter = task.meter
            if let plan = task.plans.takeNew() {
                tasks[id]?.record.segments = plan
                persist(id)
            }
            publish(id, task.properties(rate: task.meter.rate(now: now)))
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
        let transferring = tasks.values.filter { $0.machine.state == .running && isTransferring($0.record.id) }
        let allLimited = !transferring.isEmpty && transferring.allSatisfy(isRateLimited)
        return allLimited ? Self.limitedProgressInterval : Self.progressInterval
    }

    /// Whether `task` is held to a rate limit: its own, or the Manager's for its direction.
    private func isRateLimited(_ task: ManagedTask) -> Bool {
        let global = task.record.kind == .download ? settings.downloadRateLimit : settings.uploadRateLimit
        return task.record.rateLimit > 0 || global > 0
    }
}
