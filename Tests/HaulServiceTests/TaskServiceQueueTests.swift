import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import HaulTransfer
import Testing
@testable import HaulService

/// The queue as the task service carries it out, in virtual time: `MaxRunningTasks` slots given in order, `State`
/// `queued` with `WaitingFor` `slot` or `retry`, what counts in `ActivityCount`, and that waiting spends no retry.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceQueueTests {
    static func property(_ harness: TaskServiceHarness, _ path: ObjectPath, _ property: TaskProperty) async throws
        -> DBusValue
    {
        await harness.tasks.settled()
        return try harness.bus.property(path: path, interface: HaulBus.taskInterface, name: property.name)
    }

    static func queueState(_ harness: TaskServiceHarness, _ path: ObjectPath) async throws -> [DBusValue] {
        [try await property(harness, path, .state), try await property(harness, path, .waitingFor)]
    }

    static func waitForActivityCount(_ harness: TaskServiceHarness, _ count: UInt32) async throws {
        try await waitUntil("ActivityCount \(count)") {
            try harness.bus.property(
                path: HaulBus.managerPath, interface: HaulBus.indicatorInterface,
                name: IndicatorProperty.activityCount.name
            ) == .uint32(count)
        }
    }

    static let running: [DBusValue] = [.state(.running), .string("")]
    static let waitingForSlot: [DBusValue] = [.state(.queued), .string(WaitingForName.slot.rawValue)]

    static func setMaxRunningTasks(_ harness: TaskServiceHarness, _ limit: UInt32) async throws {
        try await harness.bus.setProperty(
            path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            name: ManagerProperty.maxRunningTasks.name, value: .uint32(limit)
        )
    }

    @Test func tasksOverTheLimitQueueAndTakeFreedSlotsInOrder() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 2)
            var paths: [ObjectPath] = []
            for name in ["a", "b", "c", "d"] { paths.append(try await harness.download(name).0) }
            let first = await harness.attempts.next()
            let second = await harness.attempts.next()
            #expect([first.record.path, second.record.path] == [harness.file("a"), harness.file("b")])
            #expect(harness.attempts.count == 2)
            #expect(try await Self.queueState(harness, paths[0]) == Self.running)
            #expect(try await Self.queueState(harness, paths[2]) == Self.waitingForSlot)
            #expect(try await Self.queueState(harness, paths[3]) == Self.waitingForSlot)
            try await Self.waitForActivityCount(harness, 2)  // queued tasks do not count

            // b ends: c, the first in the queue, takes its slot; d still waits.
            second.finish(.downloaded(size: 0))
            let third = await harness.attempts.next()
            #expect(third.record.path == harness.file("c"))
            #expect(try await Self.queueState(harness, paths[2]) == Self.running)
            #expect(try await Self.queueState(harness, paths[3]) == Self.waitingForSlot)

            // Raising the limit starts d at once; 0 is no limit.
            try await Self.setMaxRunningTasks(harness, 0)
            let fourth = await harness.attempts.next()
            #expect(fourth.record.path == harness.file("d"))
            #expect(try await Self.queueState(harness, paths[3]) == Self.running)
            try await Self.waitForActivityCount(harness, 3)
            for attempt in [first, third, fourth] { attempt.finish(.downloaded(size: 0)) }
        }
    }

    /// `SuspendAll` and `CancelAll` take the transferring tasks last. Taken in id order, a running task's slot, freed
    /// once its attempt ended during the wait after a batch, went to a queued task the next batch stopped again: a
    /// connection opened only to be closed, five a batch, and more connections at the server than `MaxRunningTasks`
    /// for a moment.
    @Test(arguments: [TaskService.TaskCommand.suspend, .cancel])
    func aBulkStopStartsNoQueuedTask(_ command: TaskService.TaskCommand) async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 2)
            for index in 0..<(TaskService.batch * 2) { _ = try await harness.suspendedDownload("bulk-\(index).bin") }
            await harness.tasks.forEachTask(.resume)
            let running = [await harness.attempts.next(), await harness.attempts.next()]
            await harness.tasks.forEachTask(command)
            try await waitUntil("the running attempts to be stopped") { running.allSatisfy(\.wasStopped) }
            await harness.tasks.settled()
            try await Task.sleep(for: .milliseconds(200))  // for an attempt started by mistake to reach the runner
            #expect(harness.attempts.count == 2)
        }
    }

    /// Suspend works on a queued task, and its Resume sends `TaskDidResume` again; a queued task getting its turn
    /// sends none. A new task sends one, queued or not.
    @Test func aQueuedTaskSuspendsAndResumesAndItsTurnSendsNoSignal() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 1)
            _ = try await harness.download("first")
            let first = await harness.attempts.next()
            let (path, id) = try await harness.download("second")
            #expect(try await Self.queueState(harness, path) == Self.waitingForSlot)
            try await harness.tasks.run(.suspend, on: id)
            #expect(try await Self.queueState(harness, path) == [.string("suspended"), .string("")])
            try await harness.tasks.run(.resume, on: id)
            #expect(try await Self.queueState(harness, path) == Self.waitingForSlot)
            try await harness.tasks.run(.resume, on: id)  // Resume of a queued task does nothing.
            first.finish(.downloaded(size: 0))
            let second = await harness.attempts.next()
            #expect(second.record.path == harness.file("second"))
            second.finish(.downloaded(size: 0))
            let signals = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
                .compactMap(\.member).filter { $0.hasPrefix("TaskDid") }
            #expect(signals == [
                ManagerSignal.taskDidResume.rawValue, ManagerSignal.taskDidSuspend.rawValue,
                ManagerSignal.taskDidResume.rawValue, ManagerSignal.taskDidComplete.rawValue,
            ])
        }
    }

    /// A back-off is `queued` with `WaitingFor=retry`, and frees its slot for the next task meanwhile. Waiting for
    /// a slot after the back-off spends no retry either.
    @Test func aBackOffIsQueuedForRetryAndWaitingSpendsNoRetry() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 1)
            var options = DownloadOptions()
            options.maxRetries = 1
            let (path, _) = try await harness.download("retried", options: options)
            let (otherPath, _) = try await harness.download("other")
            let first = await harness.attempts.next()
            let failedAt = harness.clock.now
            first.finish(.failed(.network("reset")))
            // The other task takes the slot while the first one backs off.
            let other = await harness.attempts.next()
            #expect(other.record.path == harness.file("other"))
            #expect(try await Self.queueState(harness, path) == [.string("queued"), .string("retry")])
            #expect(try await Self.queueState(harness, otherPath) == Self.running)
            // The back-off runs out while the slot is taken: it waits for the slot, an hour long, spending nothing.
            harness.clock.advance(to: failedAt.advanced(by: .seconds(3600)))
            #expect(try await Self.queueState(harness, path) == Self.waitingForSlot)
            #expect(harness.attempts.count == 2)
            other.finish(.downloaded(size: 0))
            let retry = await harness.attempts.next()
            #expect(retry.record.path == harness.file("retried"))
            #expect(try await Self.queueState(harness, path) == Self.running)
            // Its one retry is left for this attempt's failure: that one completes the task.
            retry.finish(.failed(.network("reset again")))
            let completed = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).last
            #expect(completed?.body.dropFirst().last == .string("reset again"))
            #expect(harness.attempts.count == 3)
        }
    }

    /// `MaxRunningTasks` is kept in manager.json, only when it is not the default.
    @Test func maxRunningTasksIsKeptAcrossARestart() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let settings = root.appendingPathComponent("state/manager.json")
        try await TaskServiceHarness.with(root: root) { harness throws in
            try await Self.setMaxRunningTasks(harness, 5)
            #expect(try String(contentsOf: settings, encoding: .utf8).contains("maxRunningTasks") == false)
            try await Self.setMaxRunningTasks(harness, 3)
        }
        #expect(try String(contentsOf: settings, encoding: .utf8).contains("\"maxRunningTasks\" : 3"))
        try await TaskServiceHarness.with(root: root) { harness throws in
            let value = try harness.bus.property(
                path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                name: ManagerProperty.maxRunningTasks.name
            )
            #expect(value == .uint32(3))
        }
    }

    /// Free slots go to foreground tasks first; `AllowMetered` follows the priority unless the option says.
    @Test func foregroundTasksTakeSlotsBeforeBackgroundOnes() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 1)
            _ = try await harness.download("first")
            let first = await harness.attempts.next()
            var background = DownloadOptions()
            background.priority = .background
            let (later, _) = try await harness.download("later", options: background)
            let (urgent, _) = try await harness.download("urgent")
            background.allowMetered = true
            let (allowed, _) = try await harness.download("allowed", options: background)
            #expect(try await Self.property(harness, later, .priority) == .string("background"))
            #expect(try await Self.property(harness, later, .allowMetered) == .boolean(false))
            #expect(try await Self.property(harness, urgent, .allowMetered) == .boolean(true))
            #expect(try await Self.property(harness, allowed, .allowMetered) == .boolean(true))
            first.finish(.downloaded(size: 0))
            let second = await harness.attempts.next()
            #expect(second.record.path == harness.file("urgent"))
            second.finish(.downloaded(size: 0))
            let third = await harness.attempts.next()
            #expect(third.record.path == harness.file("later"))
            third.finish(.downloaded(size: 0))
            await harness.attempts.next().finish(.downloaded(size: 0))
        }
    }

    /// A new task over the limit is announced queued: its object appears with `State` `queued`, never `running` first.
    @Test func aNewTaskOverTheLimitAppearsQueued() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await Self.setMaxRunningTasks(harness, 1)
            _ = try await harness.download("first")
            let first = await harness.attempts.next()
            let (second, _) = try await harness.download("second")
            let added = await harness.signals(about: second, until: "InterfacesAdded").last
            let interfaces = try #require(added?.body.dropFirst().first?.stringDictionary)
            let task = interfaces[HaulBus.taskInterface]?.stringDictionary ?? [:]
            #expect(TaskProperty.state.value(in: task) == .state(.queued))
            #expect(TaskProperty.waitingFor.value(in: task) == .string(WaitingForName.slot.rawValue))
            first.finish(.downloaded(size: 0))
            await harness.attempts.next().finish(.downloaded(size: 0))
        }
    }

    /// `AllowMetered` written by a client applies at once: forbidden on a metered network, a transfer stops and waits
    /// (`unmetered`, no retry spent); allowed again, it continues. A loopback task never waits for this.
    @Test func allowMeteredIsWritableAndAppliesAtOnce() async throws {
        try await TaskServiceHarness.with { harness throws in
            await harness.tasks.networkChanged(.init(state: .online, metered: true))
            // 192.0.2.1 (TEST-NET-1) is never contacted: the attempts are scripted.
            let (path, _) = try await harness.download("remote", host: "192.0.2.1")
            let attempt = await harness.attempts.next()
            #expect(try await Self.queueState(harness, path) == Self.running)
            try await harness.bus.setProperty(
                path: path, interface: HaulBus.taskInterface,
                name: TaskProperty.allowMetered.name, value: .boolean(false)
            )
            let unmetered: [DBusValue] = [.state(.queued), .string(WaitingForName.unmetered.rawValue)]
            try await waitUntil("the transfer to stop and wait for an unmetered network") {
                try await Self.queueState(harness, path) == unmetered
            }
            #expect(attempt.wasStopped)
            #expect(try await Self.property(harness, path, .allowMetered) == .boolean(false))
            try await harness.bus.setProperty(
                path: path, interface: HaulBus.taskInterface,
                name: TaskProperty.allowMetered.name, value: .boolean(true)
            )
            let again = await harness.attempts.next()
            #expect(try await Self.queueState(harness, path) == Self.running)
            again.finish(.downloaded(size: 0))
            await #expect(throws: DBusError.self) {
                try await harness.bus.setProperty(
                    path: path, interface: HaulBus.taskInterface,
                    name: TaskProperty.allowMetered.name, value: .string("yes")
                )
            }
        }
    }

    /// The queue's order and the priorities survive a restart: a task resumed later runs later, whatever its id.
    @Test func theQueueOrderAndPrioritiesAreKeptAcrossARestart() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await TaskServiceHarness.with(root: root) { harness throws in
            try await Self.setMaxRunningTasks(harness, 1)
            _ = try await harness.download("first")
            _ = await harness.attempts.next()
            let (backPath, back) = try await harness.download("back")
            try await harness.bus.setProperty(
                path: backPath, interface: HaulBus.taskInterface,
                name: TaskProperty.priority.name, value: .string("background")
            )
            let (_, moved) = try await harness.download("moved")
            _ = try await harness.download("stays")
            // Suspended and resumed: "moved" goes to the end of the queue.
            try await harness.tasks.run(.suspend, on: moved)
            try await harness.tasks.run(.resume, on: moved)
            let records = await harness.savedRecords()
            #expect(records[back]?.priority == .background)
        }
        try await TaskServiceHarness.with(root: root) { harness throws in
            var order: [String] = []
            for _ in 0..<4 {
                let attempt = await harness.attempts.next()
                order.append(URL(fileURLWithPath: attempt.record.path).lastPathComponent)
                #expect(harness.attempts.count == order.count, "one at a time")
                attempt.finish(.downloaded(size: 0))
            }
            #expect(order == ["first", "stays", "moved", "back"])
        }
    }

    /// An invalid `Priority` is InvalidArgs; an invalid `priority` option is InvalidArgument.
    @Test func anInvalidPriorityIsRefused() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, _) = try await harness.suspendedDownload("task")
            await #expect(throws: DBusError.self) {
                try await harness.bus.setProperty(
                    path: path, interface: HaulBus.taskInterface,
                    name: TaskProperty.priority.name, value: .string("urgent")
                )
            }
            #expect(try await Self.property(harness, path, .priority) == .string("foreground"))
            #expect(throws: DBusError.self) {
                try TransferOptionsDecoder.download([DownloadOption.priority.rawValue: .string("urgent")])
            }
        }
    }
}
