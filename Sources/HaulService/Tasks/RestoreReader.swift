import Dispatch
import HaulCore
import HaulTransfer

/// Reads a restore's saved tasks a batch ahead of the batch being exported, off the event loop.
///
/// Exporting a batch runs on the service's one thread; reading and decoding the next one meanwhile keeps the other
/// core busy. Ten thousand records took about as long to decode as to export, one after the other.
struct RestoreReader {
    /// A saved task made ready to be restored: its partial file's size read (a `stat`) and its URL parsed.
    struct Loaded: Sendable {
        let task: ManagedTask
        let traits: TaskQueue.Traits
    }

    /// One batch: its tasks in id order, and a message for each record that could not be used.
    struct Batch: Sendable {
        var tasks: [Loaded] = []
        var problems: [String] = []
    }

    private let store: TaskStore
    private var batches: ArraySlice<ArraySlice<UInt32>>
    private var ahead: Task<Batch, Never>?

    /// Starts reading the first of `ids`' batches of `batchSize`.
    init(store: TaskStore, ids: [UInt32], batchSize: Int) {
        self.store = store
        batches = stride(from: 0, to: ids.count, by: batchSize).map { ids[$0..<min($0 + batchSize, ids.count)] }[...]
        ahead = readNext()
    }

    /// The next batch, once read; the one after it is read while the caller exports this one. Nil after the last.
    mutating func next() async -> Batch? {
        guard let reading = ahead else { return nil }
        let batch = await reading.value
        ahead = readNext()
        return batch
    }

    private mutating func readNext() -> Task<Batch, Never>? {
        guard let ids = batches.popFirst() else { return nil }
        let store = store
        return Task {
            await withCheckedContinuation { continuation in
                // Blocking reads: on Dispatch's threads, not the concurrency pool's.
                DispatchQueue.global(qos: .userInitiated).async {
                    continuation.resume(returning: Self.read(ids, from: store))
                }
            }
        }
    }

    private static func read(_ ids: ArraySlice<UInt32>, from store: TaskStore) -> Batch {
        let contents = store.load(ids)
        let tasks = contents.records.map { record in
            let task = ManagedTask(record: record)
            if record.kind == .download { task.probe.set(bytes: task.bytesOnDisk, expected: record.expectedTotal) }
            return Loaded(task: task, traits: task.traits)
        }
        return Batch(tasks: tasks, problems: contents.problems)
    }
}
