import ServiceKit
import Synchronization

/// The tests' one clock: it moves only when a test advances it. The services' timers sleep on it (the task service's
/// back-off and progress ticks, the indicator's delays, the desktop bridge's tooltip), so they are checked in virtual
/// time, to the nanosecond, whatever the machine's load.
///
/// Its instants are `ContinuousClock`'s, from the moment it was made. A sleep whose deadline has come ends at once;
/// the others end when ``advance(by:)`` reaches them, or with `CancellationError` when their task is cancelled.
package final class ManualClock: ServiceClock {
    package typealias Instant = ContinuousClock.Instant

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let condition: @Sendable ([Instant]) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Instant
        var sleepers: [UInt64: Sleeper] = [:]
        /// Sleeps cancelled before they were registered.
        var cancelled: Set<UInt64> = []
        var lastID: UInt64 = 0
        var watchers: [Watcher] = []

        var deadlines: [Instant] { sleepers.values.map(\.deadline).sorted() }

        /// Takes the watchers whose condition now holds.
        mutating func satisfiedWatchers() -> [Watcher] {
            let deadlines = deadlines
            var done: [Watcher] = []
            watchers.removeAll { watcher in
                guard watcher.condition(deadlines) else { return false }
                done.append(watcher)
                return true
            }
            return done
        }
    }

    private let state: Mutex<State>

    package init() {
        state = Mutex(State(now: ContinuousClock.now))
    }

    package var now: Instant { state.withLock { $0.now } }

    package var minimumResolution: Duration { .nanoseconds(1) }

    /// The deadlines of the sleeps under way, earliest first.
    package var deadlines: [Instant] { state.withLock { $0.deadlines } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers): (Result<Void, any Error>?, [Watcher]) = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, state.satisfiedWatchers())
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in watchers { watcher.continuation.resume() }
            }
        } onCancel: {
            let (sleeper, watchers): (Sleeper?, [Watcher]) = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return (nil, [])
                }
                return (sleeper, state.satisfiedWatchers())
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            for watcher in watchers { watcher.continuation.resume() }
        }
    }

    /// Moves time on by `duration`, waking the sleeps whose deadline it reaches, earliest first.
    package func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    package func advance(to instant: Instant) {
        let (due, watchers): ([Sleeper], [Watcher]) = state.withLock { state in
            state.now = max(state.now, instant)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return (due.values.sorted { $0.deadline < $1.deadline }, state.satisfiedWatchers())
        }
        for sleeper in due { sleeper.continuation.resume() }
        for watcher in watchers { watcher.continuation.resume() }
    }

    /// Returns once the deadlines of the sleeps under way (earliest first) satisfy `condition`: a timer was armed, a
    /// periodic task is asleep again.
    package func waitForSleepers(_ condition: @escaping @Sendable ([Instant]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                guard condition(state.deadlines) else {
                    state.watchers.append(Watcher(condition: condition, continuation: continuation))
                    return false
                }
                return true
            }
            if holds { continuation.resume() }
        }
    }

    /// Returns once exactly `count` sleeps are under way.
    package func waitForSleepers(count: Int) async {
        await waitForSleepers { $0.count == count }
    }
}
