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
}
