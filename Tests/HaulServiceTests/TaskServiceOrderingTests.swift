import DBusKit
import Foundation
import HaulCore
import HaulTestSupport
import HaulTransfer
import Logging
import Synchronization
import Testing
@testable import HaulService

/// The task service run in-process on a private bus, called directly: the interleavings that awaiting between a
/// change's effects once allowed. Each runs many times, since only some schedules hit the window.
@Suite(.timeLimit(.minutes(2))) struct TaskServiceOrderingTests {
    /// The service and a client listening to what it emits.
    struct Harness {
        let bus: PrivateBus
        let tasks: TaskService
        let signals: AsyncStream<DBusMessage>
        let folder: URL
        let running: [Task<Void, Never>]

        static func with(_ body: (Harness) async throws -> Void) async throws {
            let bus = try PrivateBus()
            defer { bus.stop() }
            let server = try await DBusConnection.connect(address: bus.address)
            let client = try await DBusConnection.connect(address: bus.address)
            let objects = try await DBusObjectServer(connection: server)
            let logger = Logger(label: "test")
            let folder = bus.directory
            let indicator = ActivityIndicatorService(
                objects: objects, store: IndicatorSettingsStore(url: folder.appendingPathComponent("indicator.json")),
                logger: logger
            )
            let tasks = TaskService(
                objects: objects, indicator: indicator, client: TransferClient(),
                store: TaskStore(directory: folder.appendingPathComponent("tasks")),
                settingsURL: folder.appendingPathComponent("manager.json"), logger: logger
            )
            await objects.addObjectManager(at: HaulBus.rootPath)
            try await objects.export(
                [await ManagerService.exportedInterface(tasks: tasks), await indicator.exportedInterface()],
                at: HaulBus.managerPath
            )
            let signals = try await client.messages(matching: [MatchRule(kind: .signal, sender: server.uniqueName)])
            let running = [Task { await tasks.publishing() }, Task { await indicator.run() }]
            let harness = Harness(bus: bus, tasks: tasks, signals: signals, folder: folder, running: running)
            do {
                try await body(harness)
            } catch {
                await harness.stop(server, client)
                throw error
            }
            await harness.stop(server, client)
        }

        func stop(_ server: DBusConnection, _ client: DBusConnection) async {
            await tasks.shutdown()
            for task in running { task.cancel() }
            await client.close()
            await server.close()
        }

        /// A download that stays suspended (nothing is fetched).
        func suspendedDownload(_ name: String) async throws -> ObjectPath {
            var options = DownloadOptions()
            options.startSuspended = true
            return try await tasks.download(
                url: try TransferURL("http://127.0.0.1:1/\(name)"),
                destination: try LocalPath(folder.appendingPathComponent(name).path), options: options
            )
        }

        /// The members of the signals received about `path` (as their first argument, or their object path),
        /// until `last` arrives.
        func signals(about path: ObjectPath, until last: String) async -> [String] {
            var seen: [String] = []
            for await message in signals {
                let subject = message.body.first?.objectPathValue ?? message.path
                guard subject == path, let member = message.member else { continue }
                seen.append(member)
                if member == last { break }
            }
            return seen
        }
    }

    /// A Forget right behind the Cancel that completes a task: `TaskDidComplete` goes out before the object goes
    /// away (a Forget run while the Cancel awaited the bus used to drop the signal).
    @Test func aForgetRightAfterACancelNeverDropsTaskDidComplete() async throws {
        try await Harness.with { harness throws in
            for round in 0..<20 {
                let path = try await harness.suspendedDownload("cancelled-\(round).bin")
                let id = try #require(UInt32(path.rawValue.split(separator: "/").last ?? ""))
                async let cancelled: Void = harness.tasks.run(.cancel, on: id)
                // As soon as the task is completed, as a quick client would.
                async let forgotten: Void = {
                    while true {
                        do { return try await harness.tasks.forget(id) } catch { await Task.yield() }
                    }
                }()
                _ = try await (cancelled, forgotten)
                let seen = await harness.signals(about: path, until: "InterfacesRemoved")
                #expect(seen.contains("TaskDidComplete"), "round \(round): \(seen)")
                #expect(seen.firstIndex(of: "TaskDidComplete") ?? .max < seen.firstIndex(of: "InterfacesRemoved") ?? 0)
            }
        }
    }

    /// `SuspendAll` while a Download is being added: the task ends up suspended exactly when `TaskDidSuspend` was
    /// sent for it (the Download once wrote back a copy of the task taken before it awaited the bus, undoing the
    /// Suspend).
    @Test func aSuspendAllDuringADownloadIsNeverUndone() async throws {
        try await Harness.with { harness throws in
            for round in 0..<20 {
                var options = DownloadOptions()
                options.maxRetries = 5  // refused, then waiting to retry: still running when checked
                async let added = harness.tasks.download(
                    url: try TransferURL("http://127.0.0.1:1/\(round)"),
                    destination: try LocalPath(harness.folder.appendingPathComponent("added-\(round).bin").path),
                    options: options
                )
                async let suspended: Void = harness.tasks.forEachTask(.suspend)
                let path = try await added
                await suspended
                await harness.tasks.forEachTask(.suspend)  // whatever happened, it is suspended now
                let seen = await harness.signals(about: path, until: "TaskDidSuspend")
                let id = try #require(UInt32(path.rawValue.split(separator: "/").last ?? ""))
                #expect(await harness.tasks.tasks[id]?.machine.state == .suspended, "round \(round): \(seen)")
                #expect(seen.filter { $0 == "TaskDidSuspend" }.count == 1)
            }
        }
    }
}
