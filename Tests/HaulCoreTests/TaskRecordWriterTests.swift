import Dispatch
import Foundation
import HaulCore
import Synchronization
import Testing

@Suite("Task record writer", .timeLimit(.minutes(2)))
struct TaskRecordWriterTests {
    func record(_ id: UInt32, state: TransferTaskState) -> TaskRecord {
        var record = TaskRecord(
            id: id, kind: .download, url: "http://example.test/", path: "/tmp/x",
            createdAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        record.state = state
        if state == .completed { record.outcome = .success }
        return record
    }

    func store() throws -> TaskStore {
        let directory = FileManager.default.temporaryDirectory
            .appending(path: "haul-core-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        return TaskStore(directory: directory)
    }

    /// Runs `body` with a writer on a queue of the test's own, and `idle`, which returns once whatever the writer had
    /// queued is done: a wait that, unlike `flush()`, writes nothing that is held.
    func withQueuedWriter(
        _ body: (TaskStore, TaskRecordWriter, DispatchQueue, () async -> Void) async throws -> Void
    ) async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let queue = DispatchQueue(label: "state writer")
        let idle = { await withCheckedContinuation { continuation in queue.async { continuation.resume() } } }
        try await body(store, TaskRecordWriter(store: store, queue: queue), queue, idle)
    }

    @Test func theNewestVersionOfEachRecordIsOnDiskAfterFlush() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        for state in [TransferTaskState.running, .suspended, .running, .completed] {
            writer.save(record(1, state: state)) { Issue.record("save failed: \($0)") }
        }
        writer.save(record(2, state: .suspended)) { Issue.record("save failed: \($0)") }
        await writer.flush()
        let loaded = store.loadAll()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.records.map(\.state) == [.completed, .suspended])
    }

    @Test func aRemovalComesAfterTheSavesBeforeIt() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        writer.save(record(1, state: .running)) { Issue.record("save failed: \($0)") }
        writer.remove(id: 1) { Issue.record("remove failed: \($0)") }
        await writer.flush()
        #expect(store.loadAll().records.isEmpty)
        writer.save(record(1, state: .completed)) { Issue.record("save failed: \($0)") }
        await writer.flush()
        #expect(store.loadAll().records.map(\.state) == [.completed])
    }

    @Test func aFailedSaveIsReported() async throws {
        let store = TaskStore(directory: URL(fileURLWithPath: "/proc/haul-cannot-write-here"))
        let writer = TaskRecordWriter(store: store)
        let failures = Mutex(0)
        writer.save(record(1, state: .running)) { _ in failures.withLock { $0 += 1 } }
        await writer.flush()
        #expect(failures.withLock { $0 } == 1)
    }

    @Test func aCommittedRecordIsOnDiskWhenTheCallReturns() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        try await writer.commit(record(1, state: .suspended))
        #expect(store.loadAll().records.map(\.id) == [1])
    }

    @Test func manyCommitsAtOnceAllReachTheDisk() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in UInt32(1)...300 {
                group.addTask { try await writer.commit(self.record(id, state: .suspended)) }
            }
            try await group.waitForAll()
        }
        let loaded = store.loadAll()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.records.map(\.id) == Array(1...300))
    }

    @Test func aCommitThatCannotBeWrittenThrows() async throws {
        let writer = TaskRecordWriter(store: TaskStore(directory: URL(fileURLWithPath: "/proc/haul-cannot-write-here")))
        await #expect(throws: AtomicFileError.self) { try await writer.commit(record(1, state: .suspended)) }
    }

    @Test func aSettingsFileIsWrittenInOrderWithTheRecords() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        let settings = store.directory.appending(path: "settings.json")
        writer.save(record(1, state: .running)) { Issue.record("save failed: \($0)") }
        try await writer.write(Data("first".utf8), to: settings)
        #expect(store.loadAll().records.map(\.id) == [1])
        try await writer.write(Data("second".utf8), to: settings)
        #expect(try String(contentsOf: settings, encoding: .utf8) == "second")
        let mode = try FileManager.default.attributesOfItem(atPath: settings.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// What the spare of record 1 holds after `saves`, each a URL and whether its save says a secret went.
    func spareAfterSaving(_ saves: [(url: String, erasingPrevious: Bool)], headers: [String: String] = [:])
        async throws -> Data
    {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        for save in saves {
            var saved = record(1, state: .suspended)
            saved.url = save.url
            saved.headers = headers
            writer.save(saved, erasingPrevious: save.erasingPrevious) { Issue.record("save failed: \($0)") }
            await writer.flush()
        }
        #expect(store.loadAll().records.map(\.url) == [saves.last?.url])
        return try Data(contentsOf: URL(filePath: AtomicFile.spare(of: store.url(for: 1).path(percentEncoded: false))))
    }

    @Test func aReplacedVersionWithoutSecretsIsLeftInTheSpare() async throws {
        let spare = try await spareAfterSaving([("http://a.test/", false), ("http://b.test/", false)])
        #expect(String(decoding: spare, as: UTF8.self).contains("http://a.test/"))
    }

    @Test func aReplacedVersionThatMayHoldASecretIsErased() async throws {
        for (saves, headers) in [
            ([("http://user:hunter2@a.test/", false), ("http://user:hunter2@a.test/", false)], [:]),
            ([("http://a.test/", false), ("http://a.test/", false)], ["Cookie": "session=hunter2"]),
            // The change that took the password out says so; the record it leaves holds none.
            ([("http://user:hunter2@a.test/", false), ("http://a.test/", true)], [:]),
        ] as [([(url: String, erasingPrevious: Bool)], [String: String])] {
            let spare = try await spareAfterSaving(saves, headers: headers)
            #expect(!spare.isEmpty && spare.allSatisfy { $0 == 0 }, "\(saves)")
        }
    }

    @Test func anErasingSaveReplacedBeforeItsTurnStillErases() async throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let writer = TaskRecordWriter(store: store)
        var saved = record(1, state: .suspended)
        saved.url = "http://user:hunter2@a.test/"
        try await writer.commit(saved)
        // Held, so that the newer save replaces the one that took the password out before either is written.
        writer.hold()
        saved.url = "http://a.test/"
        saved.state = .running
        writer.save(saved, erasingPrevious: true) { Issue.record("save failed: \($0)") }
        saved.state = .suspended
        writer.save(saved) { Issue.record("save failed: \($0)") }
        writer.release()
        await writer.flush()
        let spare = try Data(
            contentsOf: URL(filePath: AtomicFile.spare(of: store.url(for: 1).path(percentEncoded: false)))
        )
        #expect(!spare.isEmpty && spare.allSatisfy { $0 == 0 })
        #expect(store.loadAll().records.map(\.state) == [.suspended])
    }

    @Test func heldSavesWaitForTheReleaseAndACommitTakesThemAlong() async throws {
        try await withQueuedWriter { store, writer, _, idle in
            writer.hold()
            writer.hold()
            writer.save(record(1, state: .suspended)) { Issue.record("save failed: \($0)") }
            await idle()
            #expect(store.loadAll().records.isEmpty, "held")
            // A caller waits for a commit: it is written at once, with the save that waited before it.
            try await writer.commit(record(2, state: .suspended))
            #expect(store.loadAll().records.map(\.id) == [1, 2])

            writer.save(record(1, state: .running)) { Issue.record("save failed: \($0)") }
            writer.remove(id: 2) { Issue.record("remove failed: \($0)") }
            writer.release()
            await idle()
            #expect(store.loadAll().records.map(\.state) == [.suspended, .suspended], "one hold is left")
            writer.release()
            await idle()
            #expect(store.loadAll().records.map(\.state) == [.running])

            writer.hold()
            writer.save(record(1, state: .completed)) { Issue.record("save failed: \($0)") }
            await writer.flush()
            #expect(store.loadAll().records.map(\.state) == [.completed], "a flush writes what is held")
        }
    }

    @Test func aHoldStopsTheWriterAfterTheBatchItIsWriting() async throws {
        try await withQueuedWriter { store, writer, queue, idle in
            // Record 1 cannot be written (a folder has its name): its failure, heard on the writer's queue once the
            // first batch is written, takes a hold there, as a `*All` would while the writer works.
            try FileManager.default.createDirectory(at: store.url(for: 1), withIntermediateDirectories: false)
            let ids = 1...UInt32(TaskRecordWriter.batchLimit + 3)
            queue.suspend()  // until every save waits, so that the first batch is a whole one
            for id in ids {
                writer.save(record(id, state: .suspended)) { _ in if id == 1 { writer.hold() } }
            }
            queue.resume()
            await idle()
            let firstBatch = Set(2...UInt32(TaskRecordWriter.batchLimit))
            #expect(Set(store.loadAll().records.map(\.id)) == firstBatch, "the batch after the hold waits")

            // The newer version replaces the one that waited; the release writes what is left.
            writer.save(record(ids.upperBound, state: .running)) { Issue.record("save failed: \($0)") }
            writer.release()
            await idle()
            let records = store.loadAll().records
            #expect(records.map(\.id) == Array(ids.dropFirst()))
            #expect(records.last?.state == .running)
        }
    }

    @Test func aCommitDuringAHoldTakesEveryBatchBeforeItAlongAndNoneAfter() async throws {
        try await withQueuedWriter { store, writer, _, idle in
            writer.hold()
            let before = 1...UInt32(TaskRecordWriter.batchLimit + 5)
            for id in before { writer.save(record(id, state: .suspended)) { Issue.record("save failed: \($0)") } }
            try await writer.commit(record(before.upperBound + 1, state: .suspended))
            #expect(store.loadAll().records.count == before.count + 1)

            writer.save(record(before.upperBound + 2, state: .suspended)) { Issue.record("save failed: \($0)") }
            await idle()
            #expect(store.loadAll().records.count == before.count + 1, "held")
            writer.release()
            await idle()
            #expect(store.loadAll().records.count == before.count + 2)
        }
    }

    @Test func oneFileOfABatchThatFailsLeavesTheOthersWritten() throws {
        let store = try store()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let good = store.directory.appending(path: "good.json")
        let other = store.directory.appending(path: "sub/other.json")
        let errors = AtomicFile.write([
            (Data("a".utf8), good), (Data("b".utf8), URL(fileURLWithPath: "/proc/haul-cannot-write-here/x")),
            (Data("c".utf8), other),
        ])
        #expect(errors.map { $0 == nil } == [true, false, true])
        #expect(try String(contentsOf: good, encoding: .utf8) == "a")
        #expect(try String(contentsOf: other, encoding: .utf8) == "c")
        // No temporary file is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
        #expect(names.sorted() == ["good.json", "sub"])
    }
}
