import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Removes and empties tasks' partial files on a thread of its own, in the order asked, never on the task service's
/// event loop: unlinking a partial file of gigabytes frees its blocks before it returns, and a `CancelAll` of ten
/// thousand tasks unlinks ten thousand files, while every other call waited on that loop.
///
/// Whoever must see a file's change done waits for ``done()``: an attempt before it looks at its partial file, so
/// that a new task to the path of one just cancelled never has its bytes removed after it began; a `Cancel` or
/// `CancelAll` before it answers, so that a client finds the partial files gone once its call returns, as it always
/// has. No other call waits for them.
final class PartialFiles: Sendable {
    private let queue: DispatchQueue

    /// Works on `queue`, a serial queue of its own unless a test brings one it can hold.
    init(queue: DispatchQueue = DispatchQueue(label: "org.haul.partial-files")) {
        self.queue = queue
    }

    /// Removes the file at `path`, if there is one.
    func remove(_ path: String) {
        queue.async { _ = unlink(path) }
    }

    /// Empties the file at `path`, if there is one.
    func empty(_ path: String) {
        queue.async { _ = truncate(path, 0) }
    }

    /// Returns once every change asked for so far is done.
    func done() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }
}
