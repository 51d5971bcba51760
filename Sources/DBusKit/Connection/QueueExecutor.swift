import Dispatch

/// A serial executor backed by one `DispatchQueue`, so that an actor and libdbus's callbacks share one context.
///
/// libdbus calls back (watches, timeouts, filters, pending-call notifications) on whatever thread runs it; by
/// running every libdbus call on this queue, those callbacks are on the actor's executor too, and
/// `assumeIsolated` can prove it at run time through `checkIsolated()`.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
