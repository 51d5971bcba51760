import DBusKit
import HaulContract
import Foundation
import HaulCore
import HaulTestSupport
import Logging
import Synchronization
import Testing
@testable import HaulService

/// The task service and the activity indicator run in-process, as hauld wires them, without a bus: their objects on
/// a `RecordingServiceBus`, which a test calls as a client calls them over the bus and which hands out what they
/// emit; on clocks the test advances, with attempts it ends by hand, and with a real task store in a folder of its
/// own. That hauld exports the same objects on a real bus is the end-to-end tests' to prove (`TransferTests`,
/// `QueueBusTests`, `IndicatorBusTests`, …).
final class TaskServiceHarness: Sendable {
    let tasks: TaskService
    let indicator: ActivityIndicatorService
    /// The task service's clock: retry timers and the progress ticker.
    let clock: ManualClock
    /// The indicator's clock, apart so that its delays never mix with the tasks' timers.
    let indicatorClock: ManualClock
    let attempts: ScriptedAttempts
    /// The services' objects, to call as a client would.
    let bus: RecordingServiceBus
    /// Every signal the services emit, in order.
    let signals: AsyncStream<DBusMessage>
    /// Where downloads go.
    let downloads: URL
    /// hauld's state directory: the task records, manager.json, indicator.json.
    let state: URL
    private let running: [Task<Void, Never>]
    private let crashed = Mutex(false)

    /// Runs `body` with fresh services, keeping their files in `root` (a fresh folder when nil): another harness on
    /// the same `root` is hauld started again.
    /// `partialFiles` works on a queue the test may hold.
    static func with(
        root: URL? = nil, partialFiles: PartialFiles = PartialFiles(), _ body: (TaskServiceHarness) async throws -> Void
    ) async throws {
        let folder = root ?? FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { if root == nil { try? FileManager.default.removeItem(at: folder) } }
        let harness = try await TaskServiceHarness(root: folder, partialFiles: partialFiles)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    private init(root: URL, partialFiles: PartialFiles) async throws {
        state = root.appendingPathComponent("state")
        downloads = root.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let bus = RecordingServiceBus(objectManager: HaulBus.rootPath)
        let logger = Logger(label: "test")
        let clock = ManualClock()
        let indicatorClock = ManualClock()
        let attempts = ScriptedAttempts(clock: clock)
        let indicator = ActivityIndicatorService(
            objects: bus, store: IndicatorSettingsStore(url: state.appendingPathComponent("indicator.json")),
            clock: indicatorClock, logger: logger
        )
        let tasks = TaskService(
            objects: bus, indicator: indicator, attempts: attempts,
            store: TaskStore(directory: state.appendingPathComponent("tasks")), partialFiles: partialFiles,
            settingsURL: state.appendingPathComponent("manager.json"), clock: clock, logger: logger
        )
        try await bus.export(
            [
                await ManagerService.exportedInterface(tasks: tasks, callers: FixedCaller()),
                await indicator.exportedInterface(),
            ],
            at: HaulBus.managerPath
        )
        signals = bus.signals
        running = [Task { await tasks.run() }, Task { await indicator.run() }]
        (self.bus, self.clock, self.indicatorClock, self.attempts, self.indicator, self.tasks) =
            (bus, clock, indicatorClock, attempts, indicator, tasks)
        // As hauld starts: the saved tasks are exported, then continued.
        await tasks.restore()
        await tasks.continueRestored()
    }

    /// hauld dies here (SIGKILL): nothing more reaches the disk, nothing stops cleanly. What it saved so far is on
    /// disk, as the records' writer would have put it there a few milliseconds later.
    func crash() async {
        await tasks.records.flush()
        crashed.withLock { $0 = true }
        for task in running { task.cancel() }
    }

    private func stop() async {
        if !crashed.withLock({ $0 }) { await tasks.shutdown() }
        for task in running { task.cancel() }
    }

    // MARK: Requests

    /// Downloads from a URL nobody serves (the attempts are scripted; `host` on loopback unless a test needs the network
    /// rules) into `name`; returns the task's path and id.
    func download(
        _ name: String, options: DownloadOptions = DownloadOptions(), host: String = "127.0.0.1"
    ) async throws -> (ObjectPath, UInt32) {
        let path = try await tasks.download(
            url: try TransferURL("http://\(host):1/\(name)"),
            destination: .file(try LocalPath(downloads.appendingPathComponent(name).path)), options: options
        )
        return (path, try #require(UInt32(path.rawValue.split(separator: "/").last ?? "")))
    }

    /// A download that stays suspended until resumed.
    func suspendedDownload(_ name: String) async throws -> (ObjectPath, UInt32) {
        var options = DownloadOptions()
        options.startSuspended = true
        return try await download(name, options: options)
    }

    func file(_ name: String) -> String { downloads.appendingPathComponent(name).path }

    /// Writes an indicator setting, as a client does.
    func setIndicator(_ name: String, _ value: DBusValue) async throws {
        try await bus.setProperty(
            path: HaulBus.managerPath, interface: HaulBus.indicatorInterface, name: name, value: value
        )
    }

    /// The records on disk, once everything saved so far has been written.
    func savedRecords() async -> [UInt32: TaskRecord] {
        await tasks.records.flush()
        let records = TaskStore(directory: state.appendingPathComponent("tasks")).loadAll().records
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
    }

    // MARK: What the services emit

    /// The signals received about `path` (their first argument, or their object path), until the first `last`.
    func signals(about path: ObjectPath, until last: String) async -> [DBusMessage] {
        var seen: [DBusMessage] = []
        for await message in signals {
            let subject = message.body.first?.objectPathValue ?? message.path
            guard subject == path else { continue }
            seen.append(message)
            if message.member == last { break }
        }
        return seen
    }

    /// The signals received from the Manager object's indicator, until `last` (by default the first
    /// `VisibilityChanged`).
    func indicatorSignals(
        until last: (DBusMessage) -> Bool = { $0.member == IndicatorSignal.visibilityChanged.rawValue }
    ) async -> [DBusMessage] {
        var seen: [DBusMessage] = []
        for await message in signals {
            guard message.path == HaulBus.managerPath else { continue }
            let isIndicator = message.member == IndicatorSignal.visibilityChanged.rawValue
                || message.body.first == .string(HaulBus.indicatorInterface)
            guard isIndicator else { continue }
            seen.append(message)
            if last(message) { break }
        }
        return seen
    }
}

/// The process behind every caller: the test's own, as if it called over the bus (the bus daemon would name it).
struct FixedCaller: CallerProcesses {
    func processID(of sender: String) -> UInt32 { UInt32(getpid()) }
}

extension DBusMessage {
    /// A `PropertiesChanged` signal's changed values.
    var changedProperties: [String: DBusValue]? {
        guard member == "PropertiesChanged", body.count == 3 else { return nil }
        return body[1].stringDictionary?.mapValues(\.unwrappedVariant)
    }
}
