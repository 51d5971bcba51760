/// The time a service reads and its timers sleep on: `EventLoopClock` in hauld. Tests give a clock they advance by
/// hand, so that retry back-off, progress coalescing and the indicator's and desktop's delays run in virtual time.
package protocol ServiceClock: Clock where Instant == ContinuousClock.Instant, Duration == Swift.Duration {}

extension ServiceClock {
    /// A timer: calls `fire` at `deadline`, unless the returned task is cancelled first. One cancelled just as it
    /// fires may still call `fire`: the state machines tell a stale timer by its generation.
    package func timer(at deadline: Instant, _ fire: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task {
            try? await sleep(until: deadline, tolerance: nil)
            guard !Task.isCancelled else { return }
            await fire()
        }
    }
}
