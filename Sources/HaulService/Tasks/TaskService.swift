import CGlibcExtras
import DBusKit
import FoundationEssentials
import Glibc
import HaulCore
import HaulTransfer
import Logging

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
    let client: TransferClient
    private let store: TaskStore
    /// Saves records off the actor: replies do not wait for the disk.
    private let records: TaskRecordWriter
    let logger: Logger
    let clock = EventLoopClock()
    var tasks: [UInt32: ManagedTask] = [:]
    var isShuttingDown = false
    /// The Manager's read-write settings (`DefaultConnections`), saved in `settingsURL`.
    private(set) var settings: ManagerSettings
    private let settingsURL: URL
    private var nextID: UInt32 = 1
    /// Ids of the records found at start (loadable or not) and the highest forgotten one: never given again.
    private var restoredIDs: Set<UInt32> = []
    private var ticker: Task<Void, Never>?
    private let outbox: AsyncStream<TaskPublication>
    let outboxInput: AsyncStream<TaskPublication>.Continuation
    /// What async-http-client frees a minute after the load, when it closes its pooled connections.
    let pooledConnectionTrim = PooledConnectionTrim()

    init(
        objects: DBusObjectServer, indicator: ActivityIndicatorService, client: TransferClient, store: TaskStore,
        settingsURL: URL, logger: Logger
    ) {
        self.objects = objects
        self.indicator = indicator
        self.client = client
        self.store = store
        records = TaskRecordWriter(store: store)
        self.logger = logger
        self.settingsURL = settingsURL
        let (settings, problem) = ManagerSettings.load(from: settingsURL)
        self.settings = settings
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
        for id in tasks.keys.sorted() {
            guard var task = tasks[id] else { continue }
            let actions = task.machine.start(now: clock.now)
            tasks[id] = task
            perform(actions, for: id)
        }
        await published()
    }

    /// Stops every attempt without touching the saved states, so that the next start continues them all.
    func shutdown() async {
        isShuttingDown = true
        ticker?.cancel()
        await pooledConnectionTrim.cancel()
        for task in tasks.values {
            task.retryTimer?.cancel()
            task.attempt?.cancel()
        }
        for task in tasks.values { await task.attempt?.value }
        // A clean stop: no task counts toward the crash-loop guard any more.
        for id in tasks.keys.sorted() {
            guard let actions = tasks[id]?.machine.ownerStoppingCleanly(), !actions.isEmpty else { continue }
            perform(actions, for: id)
        }
        await published()
        outboxInput.finish()
        await records.flush()
        await client.shutdown()
    }

    // MARK: Manager requests

    func download(url: TransferURL, destination: LocalPath, options: DownloadOptions) async throws(DBusError)
        -> ObjectPath
    {
        try HaulErrorName.mapping { () throws(TransferFailure) in
            try LocalFileChecks.destination(destination, overwrite: options.overwrite)
        }
        if tasks.values.contains(where: { $0.record.path == destination.path && $0.record.state != .completed }) {
            throw HaulErrorName.fileExists.error("another task is already downloading to \(destination.path)")
        }
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
        export(task)
        if startSuspended { persist(record.id) } else { perform(actions, for: record.id) }
        await published()
        return task.path
    }

    // MARK: Read-write properties

    /// The Manager's `DefaultConnections`: 1 to 16, saved at once.
    func setDefaultConnections(_ value: DBusValue) async throws(DBusError) {
        guard case .uint32(let connections) = value, DownloadOptions.connectionRange.contains(connections) else {
            throw .invalidArgs("DefaultConnections must be a u between 1 and 16")
        }
        var changed = settings
        changed.defaultConnections = connections
        do {
            try changed.save(to: settingsURL)
        } catch {
            throw .failed("cannot save the settings in \(settingsURL.path(percentEncoded: false)): \(error)")
        }
        settings = changed
        outboxInput.yield(.managerProperties(["DefaultConnections": .uint32(connections)]))
        await published()
    }

    /// A task's `Connections`: 1 to 16, for its next attempt (a running transfer keeps its connections until it
    /// is suspended and resumed, or retried).
    func setConnections(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .uint32(let connections) = value, DownloadOptions.connectionRange.contains(connections) else {
            throw .invalidArgs("Connections must be a u between 1 and 16")
        }
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard task.machine.state != .completed else { throw HaulErrorName.taskCompleted.error("task \(id) has completed") }
        guard task.record.kind == .download else {
            throw .invalidArgs("Connections applies to downloads; task \(id) is an upload")
        }
        tasks[id]?.record.connections = connections
        persist(id)
        publish(id, ["Connections": .uint32(connections)])
        await published()
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
            throw HaulErrorName.taskNotCompleted.error("task \(id) is \(task.machine.state.rawValue); cancel it first")
        }
        tasks[id] = nil
        records.remove(id: id) { [logger] error in
            logger.warning("cannot remove the record of forgotten task \(id): \(error)")
        }
        outboxInput.yield(.unexport(task.path))
        await published()
    }

    // MARK: Actions

    func perform(_ actions: [ManagedTask.Machine.Action], for id: UInt32) {
        for action in actions {
            guard tasks[id] != nil else { return }
            switch action {
            case .startTransfer:
                startAttempt(id)
            case .stopTransfer:
                tasks[id]?.attempt?.cancel()
            case .armRetryTimer(let deadline, let generation):
                tasks[id]?.retryTimer?.cancel()
                tasks[id]?.retryTimer = Task { [weak self, clock] in
                    try? await Task.sleep(until: deadline, clock: clock)
                    guard !Task.isCancelled else { return }
                    await self?.retryTimerFired(id, generation: generation)
                }
            case .cancelRetryTimer:
                tasks[id]?.retryTimer?.cancel()
                tasks[id]?.retryTimer = nil
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
                emitManagerSignal("TaskDidResume", id)
            case .emitDidSuspend:
                emitManagerSignal("TaskDidSuspend", id)
            case .emitDidComplete(let outcome):
                emitManagerSignal("TaskDidComplete", id, outcome: outcome)
            }
        }
    }

    private func retryTimerFired(_ id: UInt32, generation: UInt64) {
        guard var task = tasks[id] else { return }
        let actions = task.machine.retryTimerFired(generation: generation, now: clock.now)
        tasks[id] = task
        perform(actions, for: id)
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
        let rate = task.machine.state == .running ? task.meter.rate(now: clock.now) : 0
        publish(id, task.properties(rate: rate))
        let running = tasks.values.filter { $0.machine.state == .running }.count
        outboxInput.yield(.runningTasks(UInt32(clamping: running)))
        if running > 0 { startTicker() }
    }

    private func emitManagerSignal(_ member: String, _ id: UInt32, outcome: TransferOutcome? = nil) {
        guard let path = tasks[id]?.path else { return }
        var body: [DBusValue] = [.objectPath(path)]
        if let outcome {
            let failure = outcome.failure
            body += [
                .string(failure.map { HaulErrorName.fullName(of: $0.kind) } ?? ""),
                .string((failure?.message ?? "").busSafe),
            ]
        }
        outboxInput.yield(.managerSignal(member: member, body: body))
    }

    // MARK: Publishing

    private func export(_ task: ManagedTask) {
        let id = task.record.id
        let interface = DBusExportedInterface(
            HaulInterfaces.task,
            methods: [
                "Suspend": { [self] _ in try await self.run(.suspend, on: id); return [] },
                "Resume": { [self] _ in try await self.run(.resume, on: id); return [] },
                "Cancel": { [self] _ in try await self.run(.cancel, on: id); return [] },
                "Forget": { [self] _ in try await self.forget(id); return [] },
            ],
            properties: task.properties(),
            setProperty: { [self] name, value, _ in
                // The object server lets through writes of read-write properties only.
                if name == "Connections" { try await self.setConnections(value, of: id) }
            }
        )
        outboxInput.yield(.export(interface, at: task.path))
    }

    func publish(_ id: UInt32, _ properties: [String: DBusValue]) {
        guard let path = tasks[id]?.path else { return }
        outboxInput.yield(.taskProperties(properties, at: path))
    }

    /// Returns once everything queued so far is on the bus.
    private func published() async {
        await withCheckedContinuation { outboxInput.yield(.barrier($0)) }
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
            case .connectionReleased:
                await pooledConnectionTrim.connectionReleased()
            case .barrier(let continuation):
                continuation.resume()
            }
        } catch {
            logger.error("could not publish \(publication): \(error)")
        }
    }

    /// Publishes running tasks' progress ten times a second — the coalescing the contract promises — and stops when
    /// nothing runs, so an idle daemon has no timer.
    private func startTicker() {
        guard ticker == nil else { return }
        ticker = Task { [weak self, clock] in
            while !Task.isCancelled {
                try? await clock.sleep(for: .milliseconds(100))
                guard let self, await self.tick() else { break }
            }
            // The transfers' buffers were freed into glibc's per-thread arenas, which keep them (about 3 MB after
            // 200 downloads): an idle daemon hands them back to the system.
            malloc_trim(0)
        }
    }

    /// Returns whether anything is still running.
    private func tick() -> Bool {
        let now = clock.now
        var anyRunning = false
        for id in tasks.keys.sorted() {
            guard var task = tasks[id], task.machine.state == .running else { continue }
            anyRunning = true
            _ = task.meter.record(bytes: task.probe.reading.bytes, now: now)
            tasks[id]?.meter = task.meter
            if let plan = task.plans.takeNew() {
                tasks[id]?.record.segments = plan
                persist(id)
            }
            publish(id, task.properties(rate: task.meter.rate(now: now)))
        }
        if !anyRunning { ticker = nil }
        return anyRunning
    }
}
