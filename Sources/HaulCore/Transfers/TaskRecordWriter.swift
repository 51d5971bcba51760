import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Saves and removes task records on a thread of its own, so that a state change (a `Suspend`, a completion) is
/// answered without waiting for the disk.
///
/// A save is two `fsync`s (``AtomicFile``): under a download's write load they took up to 60 ms, on the service's
/// actor, in the path of every reply. Here they run on a serial queue; a record's newer version replaces one still
/// waiting, and a record's saves and its removal keep their order. A change reaches the disk a few milliseconds
/// after its reply: a crash in between restores the task as it was just before.
package final class TaskRecordWriter: Sendable {
    private enum Operation {
        case save(TaskRecord, syncing: String?, onFailure: @Sendable (any Error) -> Void)
        case remove(onFailure: @Sendable (any Error) -> Void)
    }

    private let store: TaskStore
    private let queue = DispatchQueue(label: "org.haul.task-records")
    /// The newest operation not yet started, per task id; an id is here iff a block for it is queued.
    private let pending = Mutex<[UInt32: Operation]>([:])

    package init(store: TaskStore) {
        self.store = store
    }

    /// Saves `record` soon; `onFailure` hears of a write that failed. With `syncing`, that file's data reaches the
    /// disk first: a record that says which bytes a file holds (a segmented download's plan) is never ahead of it,
    /// even after a power cut.
    package func save(
        _ record: TaskRecord, syncing: String? = nil, onFailure: @escaping @Sendable (any Error) -> Void
    ) {
        enqueue(.save(record, syncing: syncing, onFailure: onFailure), for: record.id)
    }

    /// Removes the record of task `id` after any save of it still waiting; `onFailure` hears of a failure.
    package func remove(id: UInt32, onFailure: @escaping @Sendable (any Error) -> Void) {
        enqueue(.remove(onFailure: onFailure), for: id)
    }

    /// Returns once everything asked for so far is on disk.
    package func flush() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    private func enqueue(_ operation: Operation, for id: UInt32) {
        let alreadyQueued = pending.withLock { pending in pending.updateValue(operation, forKey: id) != nil }
        guard !alreadyQueued else { return }
        queue.async { [self] in
            guard let operation = pending.withLock({ $0.removeValue(forKey: id) }) else { return }
            switch operation {
            case .save(let record, let syncing, let onFailure):
                if let syncing { Self.syncData(of: syncing) }
                do { try store.save(record) } catch { onFailure(error) }
            case .remove(let onFailure):
                do { try store.remove(id: id) } catch { onFailure(error) }
            }
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
