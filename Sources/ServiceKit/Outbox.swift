import Synchronization

/// The one shape of every service: apply a change, `send` its effects here in order without suspending, and let
/// `run()` carry them out in that order. A method that must answer only once its effects are out awaits `settled()`.
///
/// Effects that wait for an answer (a call to another program) do not hold up the ones behind them: `run` hands its
/// carrier a task group, and such a call runs as a child of it, so it is cancelled when the outbox ends instead of
/// outliving the service as an untracked `Task {}`.
///
/// The outbox ends when `finish()` was called and everything queued before it is carried out, or when `run()` is
/// cancelled (then what is still queued is dropped). From then on `send` drops its effect and `settled()` returns at
/// once, so no caller waits for a drain that will never come.
package final class Outbox<Effect: Sendable>: Sendable {
    private enum Entry: Sendable {
        case effect(Effect)
        case mark(OutboxMark)
    }

    private enum Phase {
        case open
        /// `finish()` was called: nothing new is taken, what is queued still goes out.
        case finishing
        case ended
    }

    private enum Step {
        case batch([Entry])
        case done
        case wait
    }

    private struct State {
        var queue: [Entry] = []
        var phase = Phase.open
        /// `run()` waiting for the next entry.
        var drain: CheckedContinuation<Void, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Queues an effect behind every one sent before it. Never suspends.
    package func send(_ effect: Effect) {
        enqueue(.effect(effect))
    }

    /// Returns once every effect sent before this call has been carried out, or at once when the outbox has ended.
    package func settled() async {
        await mark().reached()
    }

    /// The end of what was sent so far, marked without suspending, for a caller that sends more before it waits:
    /// ``OutboxMark/reached()`` returns once every effect sent before it has been carried out, or the outbox has ended.
    package func mark() -> OutboxMark {
        let mark = OutboxMark()
        if !enqueue(.mark(mark)) { mark.reach() }
        return mark
    }

    /// No more effects: `run()` carries out what is queued, then returns.
    package func finish() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            if case .open = state.phase { state.phase = .finishing }
            return state.drain.take()
        }?.resume()
    }

    /// Carries the effects out in order, each with the task group its calls that wait for an answer join, until the
    /// outbox ends. Runs on the caller's actor, so `carryOut` may use the service's state. Call it once.
    package nonisolated(nonsending) func run(_ carryOut: (Effect, inout DiscardingTaskGroup) async -> Void) async {
        await runInBatches { effects, group in
            for effect in effects where !Task.isCancelled { await carryOut(effect, &group) }
        }
    }

    /// `run(_:)` for a carrier that does better with many effects at once: each call gets every effect queued
    /// between two marks (`settled()` makes one too), or as many as came in meanwhile, in order.
    package nonisolated(nonsending) func runInBatches(
        _ carryOut: ([Effect], inout DiscardingTaskGroup) async -> Void
    ) async {
        await withDiscardingTaskGroup { group in
            while let batch = await next() {
                var effects: [Effect] = []
                for entry in batch {
                    switch entry {
                    case .effect(let effect):
                        effects.append(effect)
                    case .mark(let mark):
                        if !effects.isEmpty, !Task.isCancelled { await carryOut(effects, &group) }
                        effects = []
                        mark.reach()
                    }
                }
                if !effects.isEmpty, !Task.isCancelled { await carryOut(effects, &group) }
            }
            group.cancelAll()
        }
        let stranded = state.withLock { state in
            state.phase = .ended
            defer { state.queue = [] }
            return state.queue
        }
        for case .mark(let mark) in stranded { mark.reach() }
    }

    /// False when the outbox no longer takes entries.
    @discardableResult
    private func enqueue(_ entry: Entry) -> Bool {
        let (accepted, drain) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            switch (state.phase, entry) {
            case (.open, _), (.finishing, .mark):
                state.queue.append(entry)
                return (true, state.drain.take())
            case (.finishing, .effect), (.ended, _):
                return (false, nil)
            }
        }
        drain?.resume()
        return accepted
    }

    /// Everything queued, in order; nil once the outbox has ended or `run()` is cancelled.
    private func next() async -> [Entry]? {
        while true {
            let step = state.withLock { state -> Step in
                if state.cancelled { return .done }
                if !state.queue.isEmpty {
                    defer { state.queue = [] }
                    return .batch(state.queue)
                }
                if case .open = state.phase { return .wait }
                return .done
            }
            switch step {
            case .batch(let batch): return batch
            case .done: return nil
            case .wait: break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        if state.cancelled || !state.queue.isEmpty { return true }
                        if case .open = state.phase {
                            state.drain = continuation
                            return false
                        }
                        return true
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.cancelled = true
                    return state.drain.take()
                }?.resume()
            }
        }
    }
}

/// A point in an ``Outbox``'s queue (``Outbox/mark()``), reached once everything sent before it is carried out.
package final class OutboxMark: Sendable {
    private enum State {
        case pending(waiter: CheckedContinuation<Void, Never>?)
        case reached
    }

    private let state = Mutex(State.pending(waiter: nil))

    /// Returns once the mark is reached. One caller waits for a mark.
    package func reached() async {
        await withCheckedContinuation { continuation in
            let isReached = state.withLock { state -> Bool in
                guard case .pending = state else { return true }
                state = .pending(waiter: continuation)
                return false
            }
            if isReached { continuation.resume() }
        }
    }

    fileprivate func reach() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .reached }
            guard case .pending(let waiter) = state else { return nil }
            return waiter
        }?.resume()
    }
}
