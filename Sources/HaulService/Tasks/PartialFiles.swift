import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Removes and empties tasks' partial files on a thread of its own, in the order asked, never on the task service's
/// event loop: unlinking a partial file of gigabytes frees its blocks before it returns, and a `CancelAll` of ten
/// thousand tasks unlinks ten thousand files, while every other call waited on that loop. What is asked while the
/// thread works is taken in one go after, so ten thousand removals cost a few hops to the thread, not one each.
///
/// Whoever must see a file's change done waits for ``done()``: an attempt before it looks at its partial file, so
/// that a new task to the path of one just cancelled never has its bytes removed after it began; a `Cancel` or
/// `CancelAll` before it answers, so that a client finds the partial files gone once its call returns, as it always
/// has. No other call waits for them.
final class PartialFiles: Sendable {
    private enum Change {
        case remove(String)
        case empty(String)
    }

    private struct Asked {
        var changes: [Change] = []
        /// Whether a drain is queued or running, and will take what is asked before it returns.
        var isDraining = false
    }

    private let queue: DispatchQueue
    private let asked = Mutex(Asked())

    /// Works on `queue`, a serial queue of its own unless a test brings one it can hold.
    init(queue: DispatchQueue = DispatchQueue(label: "org.haul.partial-files")) {
        self.queue = queue
    }

    /// Removes the file at `path`, if there is one.
    func remove(_ path: String) { ask(.remove(path)) }

    /// Empties the file at `path`, if there is one.
    func empty(_ path: String) { ask(.empty(path)) }

    /// Returns once every change asked for so far is done: the drain queued before it takes them all. With no drain
    /// queued or running, nothing is pending, and no hop to the thread is needed (every attempt asks).
    func done() async {
        guard asked.withLock({ $0.isDraining }) else { return }
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    private func ask(_ change: Change) {
        let startsDrain = asked.withLock { asked in
            asked.changes.append(change)
            defer { asked.isDraining = true }
            return !asked.isDraining
        }
        if startsDrain { queue.async { [self] in drain() } }
    }

    private func drain() {
        while true {
            let changes = asked.withLock { asked in
                defer { asked.changes = [] }
                if asked.changes.isEmpty { asked.isDraining = false }
                return asked.changes
            }
            guard !changes.isEmpty else { return }
            for change in changes {
                switch change {
                case .remove(let path): _ = unlink(path)
                case .empty(let path): _ = truncate(path, 0)
                }
            }
        }
    }
}
