package import FoundationEssentials
package import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Writes hauld's durable state (task records and settings files) on a thread of its own, in group commits, so that
/// no `fsync` ever runs on an event loop or an actor.
///
/// A file is durable after two syncs, its own and its directory's (``AtomicFile``); each waits for the disk, from a
/// few milliseconds to seconds on a busy or slow one. Here they run on a serial queue, and whatever was asked for while
/// one batch was being written goes to the disk together in the next (up to ``batchLimit``): all of its files' data
/// synced before any rename, one sync per directory for all the renames. So a hundred new tasks cost about what two
/// do.
///
/// A record's newer version replaces one still waiting, and a record's saves and its removal keep their order. A
/// record's replaced version is overwritten with zeros once the new one is durable only when it may hold a secret
/// (``TaskRecord/mayHoldSecrets``, or a save that says so): a `SuspendAll` of ten thousand tasks without secrets
/// then writes each record's new version, and no block of zeros besides.
///
/// ``save(_:syncing:erasingPrevious:onFailure:)`` returns at once (a state change reaches the disk a few
/// milliseconds after its reply, or, during a ``hold()``, once the change of many tasks has answered: a crash in
/// between restores the tasks as they were just before); ``commit(_:)`` and ``write(_:to:)`` return once the file is
/// durable, for a caller that must not answer before.
package final class TaskRecordWriter: Sendable {
    /// What a pending operation replaces: the same task's record, or the same file.
    private enum Key: Hashable {
        case task(UInt32)
        case file(String)
    }

    private enum Operation {
        case save(TaskRecord, syncing: String?)
        case remove(UInt32)
        case write(Data, URL)
    }

    /// Called on the writer's queue with the operation's error, or nil once it is done.
    private typealias Completion = @Sendable ((any Error)?) -> Void

    private struct Pending {
        var operation: Operation
        var completions: [Completion]
        /// Whether the version on disk, which the operation replaces, may hold a secret the new one lacks.
        var erasesPrevious = false
        /// Whether a caller waits until it is durable (a commit, a settings file): no hold delays it.
        var awaited = false
    }

    private struct Queued {
        /// The newest operation of each key not yet started.
        var pending: [Key: Pending] = [:]
        /// The keys of `pending` in the order they were first asked for.
        var order: [Key] = []
        /// Whether a batch is queued or running, and will take what is pending when its turn comes.
        var batchQueued = false
        /// How many ``hold()``s are not yet released: saves and removals wait meanwhile.
        var holds = 0
        /// How many pending operations a caller waits for.
        var awaited = 0
        /// How many ``flush()``es wait for everything pending.
        var flushes = 0

        /// Whether what is pending may be written now: no hold stops it, or a caller waits for some of it.
        var mayWrite: Bool { !pending.isEmpty && (holds == 0 || awaited > 0 || flushes > 0) }

        /// Whether a batch must be queued now for what is pending: none is queued yet, and it may be written. Marks it
        /// queued.
        mutating func startsBatch() -> Bool {
            guard !batchQueued, mayWrite else { return false }
            batchQueued = true
            return true
        }

        /// The next operations to write, oldest first and at most `limit`; nil, and the batch over, once what is
        /// left may not be written now.
        mutating func nextBatch(limit: Int) -> [Pending]? {
            guard mayWrite else {
                batchQueued = false
                return nil
            }
            let keys = Array(order.prefix(limit))
            order.removeFirst(keys.count)
            let batch = keys.compactMap { pending.removeValue(forKey: $0) }
            awaited -= batch.count { $0.awaited }
            return batch
        }
    }

    private let store: TaskStore
    private let queue: DispatchQueue
    private let queued = Mutex(Queued())

    /// Writes into `store` on `queue`, a serial queue of its own unless a test brings one it can hold.
    package init(store: TaskStore, queue: DispatchQueue = DispatchQueue(label: "org.haul.state-writer")) {
        self.store = store
        self.queue = queue
    }

    /// Saves `record` soon (once every ``hold()`` is released); `onFailure` hears of a write that failed. With
    /// `syncing`, that file's data reaches the disk first: a record that says which bytes a file holds (a segmented
    /// download's plan) is never ahead of it, even after a power cut. `erasingPrevious` is for a change that removed
    /// a secret (a URL without the password of the one it replaced): the version on disk is overwritten with zeros
    /// once the new one is durable.
    package func save(
        _ record: TaskRecord, syncing: String? = nil, erasingPrevious: Bool = false,
        onFailure: @escaping @Sendable (any Error) -> Void
    ) {
        enqueue(.save(record, syncing: syncing), for: .task(record.id), erasingPrevious: erasingPrevious) { error in
            error.map(onFailure)
        }
    }

    /// Saves `record` and returns once it is durable, in the next group commit. Throws an encoding error (none is
    /// expected) or ``AtomicFileError``.
    package func commit(_ record: TaskRecord) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueue(.save(record, syncing: nil), for: .task(record.id), waitedFor: true) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Removes the record of task `id` after any save of it still waiting; `onFailure` hears of a failure.
    package func remove(id: UInt32, onFailure: @escaping @Sendable (any Error) -> Void) {
        enqueue(.remove(id), for: .task(id)) { error in error.map(onFailure) }
    }

    /// Writes `data` to `url` as ``AtomicFile`` does, in order with the records, and returns once it is durable.
    package func write(_ data: Data, to url: URL) async throws(AtomicFileError) {
        let key = Key.file(url.standardizedFileURL.path(percentEncoded: false))
        let error: (any Error)? = await withCheckedContinuation { continuation in
            enqueue(.write(data, url), for: key, waitedFor: true) { error in continuation.resume(returning: error) }
        }
        if let error = error as? AtomicFileError { throw error }
    }

    /// Returns once everything asked for so far is on disk, held or not.
    package func flush() async {
        let startBatch = queued.withLock { queued in
            queued.flushes += 1
            return queued.startsBatch()
        }
        if startBatch { queue.async { [self] in writeBatches() } }
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        queued.withLock { $0.flushes -= 1 }
    }

    /// Holds the saves and removals not yet started until ``release()``: a change of ten thousand tasks (a
    /// `SuspendAll`) is answered first and written after, rather than sharing the two cores with its own records, or
    /// with the records of the one before it, which wait after their current batch (``batchLimit``). A newer save of
    /// a task replaces its waiting one, so that only the latest state is written. A commit or a settings file, which
    /// a caller waits for, is written at once, with whatever waits before it.
    package func hold() {
        queued.withLock { $0.holds += 1 }
    }

    /// Ends a ``hold()``; the last one writes what waited.
    package func release() {
        let startBatch = queued.withLock { queued in
            queued.holds -= 1
            return queued.startsBatch()
        }
        if startBatch { queue.async { [self] in writeBatches() } }
    }

    /// `waitedFor`: a caller waits until the operation is durable, so a hold does not delay it.
    private func enqueue(
        _ operation: Operation, for key: Key, erasingPrevious: Bool = false, waitedFor: Bool = false,
        completion: @escaping Completion
    ) {
        let startBatch = queued.withLock { queued in
            if var waiting = queued.pending[key] {
                waiting.operation = operation
                waiting.completions.append(completion)
                // The version on disk is still the one before the first waiting save.
                waiting.erasesPrevious = waiting.erasesPrevious || erasingPrevious
                if waitedFor && !waiting.awaited { queued.awaited += 1 }
                waiting.awaited = waiting.awaited || waitedFor
                queued.pending[key] = waiting
            } else {
                queued.pending[key] = Pending(
                    operation: operation, completions: [completion], erasesPrevious: erasingPrevious,
                    awaited: waitedFor
                )
                queued.order.append(key)
                if waitedFor { queued.awaited += 1 }
            }
            return queued.startsBatch()
        }
        if startBatch { queue.async { [self] in writeBatches() } }
    }

    /// The most operations one group commit takes: a hold waits for the batch being written, about a twentieth of a
    /// second of the writer's work, not for all ten thousand records of the `*All` before it.
    package static var batchLimit: Int { 512 }

    /// Writes what is pending, a batch at a time, while it may be written.
    private func writeBatches() {
        while let batch = queued.withLock({ $0.nextBatch(limit: Self.batchLimit) }) {
            write(batch)
        }
    }

    /// Carries out `batch` as one group commit.
    private func write(_ batch: [Pending]) {
        var files: [(data: Data, url: URL, spare: AtomicFile.Spare)] = []
        var written: [[Completion]] = []
        var removed: [(id: UInt32, completions: [Completion])] = []
        var results: [(completions: [Completion], error: (any Error)?)] = []
        let encoder = TaskStore.recordEncoder()
        for pending in batch {
            switch pending.operation {
            case .save(let record, let syncing):
                if let syncing { Self.syncData(of: syncing) }
                do {
                    let spare = record.mayHoldSecrets || pending.erasesPrevious ? AtomicFile.Spare.erased : .kept
                    files.append((try TaskStore.encoded(record, with: encoder), store.url(for: record.id), spare))
                    written.append(pending.completions)
                } catch {
                    results.append((pending.completions, error))
                }
            case .write(let data, let url):
                files.append((data, url, .none))
                written.append(pending.completions)
            case .remove(let id):
                removed.append((id, pending.completions))
            }
        }
        let removalErrors = store.remove(ids: removed.map(\.id))
        for (id, completions) in removed { results.append((completions, removalErrors[id])) }
        for (completions, error) in zip(written, AtomicFile.write(files)) { results.append((completions, error)) }
        for (completions, error) in results {
            for completion in completions { completion(error) }
        }
    }

    /// Best effort: a file that cannot be synced (gone, say) leaves the record as the only guide.
    private static func syncData(of path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fdatasync(fd)
        close(fd)
    }
}
