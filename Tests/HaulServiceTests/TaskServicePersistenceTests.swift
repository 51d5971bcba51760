import DBusKit
import HaulContract
import HaulTestSupport
import Foundation
import HaulCore
import HaulTransfer
import Testing
@testable import HaulService

/// What the task service saves, in-process with a real store: the record after each change, and hauld started again
/// on the same folder, after a crash or a clean stop. `TransferTests` and `CrashLoopGuardTests` kill a real hauld;
/// these follow the record through every step.
@Suite(.timeLimit(.minutes(3))) struct TaskServicePersistenceTests {
    static let resumableHead: [(String, String)] = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")]

    @Test func everyChangeIsSavedBeforeTheReply() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, id) = try await harness.suspendedDownload("saved.bin")
            var saved = await harness.savedRecords()[id]
            #expect(saved?.state == .suspended)
            #expect(saved?.interruptedRuns == 0)

            try await harness.tasks.run(.resume, on: id)
            saved = await harness.savedRecords()[id]
            #expect(saved?.state == .running)
            #expect(saved?.interruptedRuns == 1, "an attempt is in flight: a crash now counts")

            let attempt = await harness.attempts.next()
            await attempt.head(headers: Self.resumableHead, expectedTotal: 1000)
            saved = await harness.savedRecords()[id]
            #expect(saved?.validator?.etag == "\"v1\"")
            #expect(saved?.expectedTotal == 1000)
            #expect(saved?.httpStatus == 200)
            #expect(saved?.resumable == true)

            try await harness.tasks.run(.suspend, on: id)
            #expect(await harness.savedRecords()[id]?.state == .suspended)

            try await harness.tasks.run(.resume, on: id)
            await harness.attempts.next().finish(.downloaded(size: 1000))
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
            saved = await harness.savedRecords()[id]
            #expect(saved?.state == .completed)
            #expect(saved?.outcome == .success)
            #expect(saved?.interruptedRuns == 0)

            let (cancelledPath, cancelled) = try await harness.download("cancelled.bin")
            try await harness.tasks.run(.cancel, on: cancelled)
            _ = await harness.signals(about: cancelledPath, until: ManagerSignal.taskDidComplete.rawValue)
            #expect(await harness.savedRecords()[cancelled]?.outcome == .failure(.cancelled))

            try await harness.tasks.forget(id)
            #expect(await harness.savedRecords()[id] == nil)
        }
    }

    /// hauld dies mid-download: started again, it shows the task as it was, with the bytes on disk, and its next
    /// attempt continues from them under the saved validator.
    @Test func aRestartAfterACrashContinuesFromTheBytesOnDisk() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var task: (path: ObjectPath, id: UInt32)?
        try await TaskServiceHarness.with(root: root) { first throws in
            let (path, id) = try await first.download("resumed.bin")
            task = (path, id)
            let attempt = await first.attempts.next()
            await attempt.head(headers: Self.resumableHead, expectedTotal: 1000)
            try Data(repeating: 7, count: 400).write(to: URL(fileURLWithPath: first.file("resumed.bin.haul-partial")))
            attempt.reports.progress.set(bytes: 400)
            await first.crash()
        }
        let (path, id) = try #require(task)
        try await TaskServiceHarness.with(root: root) { second throws in
            #expect(await second.tasks.list() == [path])
            let properties = await second.tasks.properties(of: id)
            #expect(properties?[TaskProperty.state.name] == .state(.running))
            #expect(properties?[TaskProperty.bytesReceived.name] == .uint64(400))
            #expect(properties?[TaskProperty.bytesExpectedToReceive.name] == .int64(1000))

            let attempt = await second.attempts.next()
            let validator = try #require(attempt.record.validator)
            #expect(validator.etag == "\"v1\"")
            let partial = try Data(contentsOf: URL(fileURLWithPath: second.file("resumed.bin.haul-partial")))
            let start = DownloadStart(attempt.record, partialSize: UInt64(partial.count))
            #expect(start == .single(offset: 400, validator: validator))
            #expect(await second.savedRecords()[id]?.interruptedRuns == 2, "the crash was counted before the attempt")

            attempt.finish(.downloaded(size: 1000))
            _ = await second.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
            #expect(await second.savedRecords()[id]?.state == .completed)
        }
    }

    /// The crash-loop guard: two crashes in a row with the attempt in flight restore the task suspended, with a
    /// message, until a Resume. (`CrashLoopGuardTests` does this to a real hauld with SIGKILL.)
    @Test func twoCrashesInARowRestoreTheTaskSuspendedUntilResumed() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let id = try await Self.crashMidAttempt(root: root)
        try await TaskServiceHarness.with(root: root) { second throws in
            _ = await second.attempts.next()
            await second.crash()
        }
        try await TaskServiceHarness.with(root: root) { third throws in
            let properties = await third.tasks.properties(of: id)
            #expect(properties?[TaskProperty.state.name] == .state(.suspended))
            #expect(properties?[TaskProperty.errorName.name] == .string(""), "suspended, not failed")
            let message = properties?[TaskProperty.errorMessage.name]?.stringValue ?? ""
            #expect(message.contains("exited unexpectedly twice in a row"), "\(message)")
            #expect(third.attempts.count == 0, "not started a third time")

            try await third.tasks.run(.resume, on: id)
            _ = await third.attempts.next()
            #expect(await third.tasks.properties(of: id)?[TaskProperty.errorMessage.name] == .string(""))
        }
    }

    /// A task the queue holds back has no attempt in flight: crashes meanwhile are not counted against it, and the
    /// guard suspends only the task that was transferring each time.
    @Test func aTaskHeldInTheQueueIsNotCountedByTheCrashLoopGuard() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var ids: (running: UInt32, queued: UInt32) = (0, 0)
        try await TaskServiceHarness.with(root: root) { first throws in
            try await TaskServiceQueueTests.setMaxRunningTasks(first, 1)
            ids.running = try await first.download("running.bin").1
            _ = await first.attempts.next()
            ids.queued = try await first.download("queued.bin").1
            #expect(await first.savedRecords()[ids.queued]?.interruptedRuns == 0)
            await first.crash()
        }
        try await TaskServiceHarness.with(root: root) { second throws in
            let attempt = await second.attempts.next()
            #expect(attempt.record.id == ids.running, "the queue's order is kept")
            #expect(await second.savedRecords()[ids.queued]?.interruptedRuns == 0, "held back: not counted")
            await second.crash()
        }
        try await TaskServiceHarness.with(root: root) { third throws in
            let suspended = await third.tasks.properties(of: ids.running)
            #expect(suspended?[TaskProperty.state.name] == .state(.suspended))
            let waited = await third.tasks.properties(of: ids.queued)
            try #require(waited?[TaskProperty.state.name] != .state(.suspended), "the guard suspended a task that only waited")
            #expect(waited?[TaskProperty.errorMessage.name] == .string(""))
            let attempt = await third.attempts.next()
            #expect(attempt.record.id == ids.queued, "the task that only waited goes on")
            attempt.finish(.downloaded(size: 0))
        }
    }

    /// A crash, a clean stop, a crash: never two unclean exits in a row, so the task goes on.
    @Test func aCleanStopBetweenCrashesStartsTheCountAgain() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let id = try await Self.crashMidAttempt(root: root)
        try await TaskServiceHarness.with(root: root) { second throws in
            _ = await second.attempts.next()
            #expect(await second.savedRecords()[id]?.interruptedRuns == 2)
        }
        #expect(TaskStore(directory: root.appendingPathComponent("state/tasks")).loadAll().records.first?
            .interruptedRuns == 0, "a clean stop")
        try await TaskServiceHarness.with(root: root) { third throws in
            _ = await third.attempts.next()
            await third.crash()
        }
        try await TaskServiceHarness.with(root: root) { fourth throws in
            _ = await fourth.attempts.next()
            let properties = await fourth.tasks.properties(of: id)
            #expect(properties?[TaskProperty.state.name] == .state(.running))
            #expect(properties?[TaskProperty.errorMessage.name] == .string(""))
        }
    }

    /// A restore reads a batch ahead of the one it exports: over several batches every task comes back, with the
    /// bytes on disk, a damaged record in the middle costs only its own task, and new tasks get fresh ids.
    @Test func aRestoreOfSeveralBatchesBringsBackEveryTask() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("state/tasks")
        let downloads = root.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let count = UInt32(TaskService.batch * 2 + 3)
        let damaged = UInt32(TaskService.batch + 5)
        for id in 1...count {
            let file = folder.appendingPathComponent("\(id).json")
            guard id != damaged else {
                try Data("{\"id\": ".utf8).write(to: file)
                continue
            }
            let record = TaskRecord(
                id: id, kind: .download, url: "http://127.0.0.1:9/f\(id)",
                path: downloads.appendingPathComponent("f\(id).bin").path, createdAt: Date(), state: .suspended
            )
            try TaskStore.encoded(record).write(to: file)
        }
        let partial = downloads.appendingPathComponent("f\(count).bin.haul-partial")
        try Data(repeating: 1, count: 123).write(to: partial)

        try await TaskServiceHarness.with(root: root) { harness throws in
            let expected = (1...count).filter { $0 != damaged }.map(HaulBus.taskPath)
            #expect(await harness.tasks.list() == expected)
            let last = await harness.tasks.properties(of: count)
            #expect(last?[TaskProperty.bytesReceived.name] == .uint64(123))
            #expect(last?[TaskProperty.state.name] == .state(.suspended))
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(damaged).json").path))
            let (_, id) = try await harness.suspendedDownload("new.bin")
            #expect(id == count + 1)
        }
    }

    /// A download whose attempt is in flight when hauld crashes; returns its id.
    static func crashMidAttempt(root: URL) async throws -> UInt32 {
        var id: UInt32 = 0
        try await TaskServiceHarness.with(root: root) { first throws in
            (_, id) = try await first.download("looping.bin")
            _ = await first.attempts.next()
            await first.crash()
        }
        return id
    }
}
