import HaulCore
import HaulTestSupport
import HaulTransfer
import Synchronization

/// Attempts the test runs by hand, in place of HTTP: each started attempt waits until the test ends it (or its task
/// is cancelled, when it ends as cancelled, as a real one does), and reports what the test tells it to.
final class ScriptedAttempts: AttemptRunner {
    private struct State {
        var started: [ScriptedAttempt] = []
        var taken = 0
        var waiting: [CheckedContinuation<ScriptedAttempt, Never>] = []
        var isShutDown = false
    }

    private let clock: ManualClock
    private let state = Mutex(State())

    init(clock: ManualClock) {
        self.clock = clock
    }

    /// How many attempts were started so far.
    var count: Int { state.withLock { $0.started.count } }

    func run(_ record: TaskRecord, reports: AttemptReports) async -> AttemptResult {
        let attempt = ScriptedAttempt(record: record, reports: reports, startedAt: clock.now)
        return await attempt.result { [self] in
            let (isShutDown, taker) = state.withLock { state -> (Bool, CheckedContinuation<ScriptedAttempt, Never>?) in
                state.started.append(attempt)
                guard !state.waiting.isEmpty else { return (state.isShutDown, nil) }
                state.taken += 1
                return (state.isShutDown, state.waiting.removeFirst())
            }
            taker?.resume(returning: attempt)
            if isShutDown { attempt.finish(.failed(.cancelled)) }
        }
    }

    func shutdown() async {
        state.withLock { $0.isShutDown = true }
    }

    /// The next attempt started, in the order they started (waits for it).
    func next() async -> ScriptedAttempt {
        await withCheckedContinuation { continuation in
            let ready: ScriptedAttempt? = state.withLock { state in
                guard state.taken < state.started.count else {
                    state.waiting.append(continuation)
                    return nil
                }
                state.taken += 1
                return state.started[state.taken - 1]
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// One attempt under the test's control.
final class ScriptedAttempt: Sendable {
    let record: TaskRecord
    let reports: AttemptReports
    /// The clock's time when it started.
    let startedAt: ContinuousClock.Instant
    /// Its end: set once, by the test or by a cancellation.
    private let end = Mutex<(result: AttemptResult?, waiter: CheckedContinuation<AttemptResult, Never>?)>((nil, nil))

    init(record: TaskRecord, reports: AttemptReports, startedAt: ContinuousClock.Instant) {
        self.record = record
        self.reports = reports
        self.startedAt = startedAt
    }

    /// Sends a download's response head; returns once the service has it.
    func head(status: Int = 200, headers: [(String, String)] = [], offset: Int64 = 0, expectedTotal: Int64?) async {
        await reports.head(DownloadHead(status: status, headers: headers, offset: offset, expectedTotal: expectedTotal))
    }

    /// Ends the attempt with `result`, unless it has ended already (stopped).
    func finish(_ result: AttemptResult) {
        let waiter = end.withLock { end -> CheckedContinuation<AttemptResult, Never>? in
            guard end.result == nil else { return nil }
            end.result = result
            defer { end.waiter = nil }
            return end.waiter
        }
        waiter?.resume(returning: result)
    }

    /// Whether the service stopped it (cancelled its task) before the test ended it.
    var wasStopped: Bool { end.withLock { $0.result == .failed(.cancelled) } }

    /// Waits for the end; `started` hands the attempt to the test from within, where the service stopping it (a
    /// cancellation) ends it at once: a test that sees the service stop it finds `wasStopped` already true.
    fileprivate func result(started: () -> Void) async -> AttemptResult {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ended = end.withLock { end -> AttemptResult? in
                    if end.result == nil { end.waiter = continuation }
                    return end.result
                }
                started()
                if let ended { continuation.resume(returning: ended) }
            }
        } onCancel: {
            finish(.failed(.cancelled))
        }
    }
}
