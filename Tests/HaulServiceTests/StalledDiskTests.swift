import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import HaulTransfer
import Logging
import Testing
@testable import HaulService

/// A disk that stalls holds up only what waits for it: the task service and the object server run in-process with
/// real attempts against the test server, and the state writer is blocked on a FIFO (opening one for reading waits
/// for a writer) while a download runs, a new task waits for its record, and a client reads a property.
@Suite("Stalled disk", .timeLimit(.minutes(2)))
struct StalledDiskTests {
    @Test func aStalledSaveDelaysNeitherARunningDownloadNorAPropertyRead() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        let client = try await DBusConnection.connect(address: bus.address)
        let objects = try await DBusObjectServer(connection: connection)
        let logger = Logger(label: "test")
        let store = TaskStore(directory: root.appendingPathComponent("state/tasks"))
        let writer = TaskRecordWriter(store: store)
        let indicator = ActivityIndicatorService(
            objects: objects, store: IndicatorSettingsStore(url: root.appendingPathComponent("state/indicator.json")),
            writer: writer, logger: logger
        )
        let tasks = TaskService(
            objects: objects, indicator: indicator, attempts: TransferAttempts(client: TransferClient()),
            store: store, records: writer, settingsURL: root.appendingPathComponent("state/manager.json"),
            logger: logger
        )
        await objects.addObjectManager(at: HaulBus.rootPath)
        try await objects.export(
            [
                await ManagerService.exportedInterface(tasks: tasks, callers: connection),
                await indicator.exportedInterface(),
            ],
            at: HaulBus.managerPath
        )
        let running = [Task { await tasks.publishing() }, Task { await indicator.run() }, Task { await objects.run() }]
        defer { for task in running { task.cancel() } }
        await tasks.restore()
        await tasks.continueRestored()

        func call(_ method: ManagerMethod, _ body: [DBusValue]) async throws -> ObjectPath {
            let reply = try await client.call(
                destination: connection.uniqueName, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                member: method.rawValue, body
            )
            return try #require(reply.first?.objectPathValue)
        }
        func bytesReceived(_ task: ObjectPath) async throws -> UInt64 {
            try await client.property(
                destination: connection.uniqueName, path: task, interface: HaulBus.taskInterface,
                name: TaskProperty.bytesReceived.name
            ).unwrapped.uint64Value ?? 0
        }

        // 8 MiB at 256 KiB/s: it runs for half a minute.
        let downloading = try await call(
            .download,
            [.string(server.url("/gen/8m?seed=1&throttle=262144")), .string(root.appendingPathComponent("a").path)]
        )
        try await waitUntil("the download to receive bytes") { try await bytesReceived(downloading) > 0 }

        // The writer's thread waits in `open` of the FIFO until this test opens it for writing.
        let fifo = root.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        var blocker = TaskRecord(
            id: 999, kind: .download, url: "http://127.0.0.1:1/", path: fifo, createdAt: Date()
        )
        blocker.state = .suspended
        writer.save(blocker, syncing: fifo) { _ in }

        let created = Task {
            try await call(
                .downloadWithOptions,
                [
                    .string(server.url("/gen/1k")), .string(root.appendingPathComponent("b").path),
                    .vardict([DownloadOption.startSuspended.rawValue: .boolean(true)]),
                ]
            )
        }
        // Its id is taken once its call has reached the service, which then waits for the disk.
        try await waitUntil("the new task to wait for its record") { await tasks.nextID == 3 }
        // Meanwhile a property read is answered, and the running download goes on receiving.
        let before = try await bytesReceived(downloading)
        try await waitUntil("the download to receive more bytes", timeout: .seconds(20)) {
            try await bytesReceived(downloading) > before
        }
        #expect(!FileManager.default.fileExists(atPath: store.url(for: 2).path))
        #expect(try await client.call(
            destination: connection.uniqueName, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: ManagerMethod.listTasks.rawValue
        ).first?.arrayValue?.count == 1)

        // The disk comes back: the new task is answered, its record on disk.
        try await waitUntil("the writer to wait on the FIFO") {
            let fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
            return fd >= 0
        }
        let path = try await created.value
        #expect(path == HaulBus.taskPath(2))
        #expect(FileManager.default.fileExists(atPath: store.url(for: 2).path))

        await tasks.shutdown()
        await client.close()
        await connection.close()
    }
}
