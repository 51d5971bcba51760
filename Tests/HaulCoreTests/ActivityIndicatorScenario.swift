import HaulCore

/// A machine (activation 1 s, completion 200 ms) brought into a given state by a fixed timeline:
/// - `notActive`: fresh, at 0 ms;
/// - `delayingStart`: count 1 at 0 ms (activation timer generation 1, due at 1000 ms);
/// - `active`: then the activation timer fired at 1000 ms;
/// - `delayingEnd`: then count 0 at 1500 ms (completion timer generation 2, due at 1700 ms).
struct ActivityIndicatorScenario {
    var machine: Machine
    var now: TestInstant
    /// The timer running in `state`, as the owner would have scheduled it.
    var armed: (kind: ActivityIndicatorTimer, deadline: TestInstant, generation: UInt64)?

    init(_ state: ActivityIndicatorState) {
        machine = Machine(activationDelay: .seconds(1), completionDelay: .milliseconds(200))
        now = ms(0)
        guard state != .notActive else { return }
        _ = machine.activityCountChanged(to: 1, now: now)
        armed = (.activation, ms(1000), 1)
        guard state != .delayingStart else { return }
        now = ms(1000)
        _ = machine.timerFired(.activation, generation: 1, now: now)
        armed = nil
        guard state != .active else { return }
        now = ms(1500)
        _ = machine.activityCountChanged(to: 0, now: now)
        armed = (.completion, ms(1700), 2)
    }
}
