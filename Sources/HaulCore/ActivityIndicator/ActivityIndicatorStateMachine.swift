/// The delayed activity manager (AFNetworking's `AFNetworkActivityIndicatorManager`; its bus side is
/// `org.haul.Haul1.ActivityIndicator` in `dbus/org.haul.Haul1.xml`), as a sans-I/O state machine.
///
/// The machine never reads a clock and never schedules anything: every event carries `now`, and every event returns
/// the ``Action``s its owner must perform, in order. The owner keeps at most one scheduled timer per
/// ``ActivityIndicatorTimer`` and reports its expiry with ``timerFired(_:generation:now:)``.
///
/// Timers are identified by a generation number, so a timer the owner failed to cancel in time (it already fired and
/// its event is queued behind the event that cancelled or re-armed it) is recognised as stale and ignored.
///
/// Invariants, whatever the sequence of events:
/// - ``isVisible`` is true exactly in ``ActivityIndicatorState/active`` and ``ActivityIndicatorState/delayingEnd``;
/// - the activation timer is armed exactly in ``ActivityIndicatorState/delayingStart``, the completion timer exactly
///   in ``ActivityIndicatorState/delayingEnd``;
/// - while disabled the state is ``ActivityIndicatorState/notActive``;
/// - ``Action/setVisible(_:)`` and ``Action/publishState(_:)`` are only emitted for real changes.
package struct ActivityIndicatorStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the owner must do after an event, in the order given.
    package enum Action: Equatable, Sendable {
        /// Schedule the timer `kind` to fire at `deadline`, replacing any timer of that kind already scheduled, and
        /// report it with ``ActivityIndicatorStateMachine/timerFired(_:generation:now:)`` and this `generation`.
        /// A deadline at or before the current instant means "fire as soon as possible".
        case armTimer(ActivityIndicatorTimer, deadline: Instant, generation: UInt64)
        /// Cancel the scheduled timer `kind`. Only emitted for a timer that is armed.
        case cancelTimer(ActivityIndicatorTimer)
        /// The public state changed (D-Bus `State`); emitted once per real change.
        case publishState(ActivityIndicatorState)
        /// The indicator's visibility changed (D-Bus `Visible` and `VisibilityChanged`); emitted once per real change.
        case setVisible(Bool)
    }

    /// An armed timer: `start` is kept so that a delay change can re-arm it relative to when it was first armed.
    private struct ArmedTimer: Sendable {
        var start: Instant
        var deadline: Instant
        var generation: UInt64
    }

    /// The timer each waiting state runs lives in the state itself, so "armed exactly while delaying" holds by
    /// construction.
    private enum State: Sendable {
        case notActive
        case delayingStart(ArmedTimer)
        case active
        case delayingEnd(ArmedTimer)
    }

    /// The largest delay the machine accepts; longer ones are clamped to it (``IndicatorSettings`` rejects them).
    package static var maximumDelay: Duration { .seconds(IndicatorSettings.maximumDelaySeconds) }

    private var current: State = .notActive
    private var lastGeneration: UInt64 = 0

    /// The current activity count (running tasks plus manual holds), remembered even while disabled.
    package private(set) var activityCount: UInt32 = 0
    /// Whether the manager reacts to activity; when false the state is always ``ActivityIndicatorState/notActive``.
    package private(set) var isEnabled: Bool
    /// How long activity must last before the indicator is shown.
    package private(set) var activationDelay: Duration
    /// How long the indicator stays shown after activity stops.
    package private(set) var completionDelay: Duration

    /// Creates a machine in ``ActivityIndicatorState/notActive`` with an activity count of zero.
    ///
    /// Delays are clamped into `0...maximumDelay`, so no input can make a deadline overflow.
    package init(
        activationDelay: Duration = .seconds(1),
        completionDelay: Duration = .milliseconds(170),
        isEnabled: Bool = true
    ) {
        self.activationDelay = Self.clamped(activationDelay)
        self.completionDelay = Self.clamped(completionDelay)
        self.isEnabled = isEnabled
    }

    /// The public state (D-Bus `State`).
    package var state: ActivityIndicatorState {
        switch current {
        case .notActive: .notActive
        case .delayingStart: .delayingStart
        case .active: .active
        case .delayingEnd: .delayingEnd
        }
    }

    /// Whether the indicator is shown (D-Bus `Visible`).
    package var isVisible: Bool {
        switch current {
        case .notActive, .delayingStart: false
        case .active, .delayingEnd: true
        }
    }

    // MARK: - Events

    /// The activity count is now `count`. Safe to call with an unchanged count (it does nothing then).
    package mutating func activityCountChanged(to count: UInt32, now: Instant) -> [Action] {
        activityCount = count
        guard isEnabled else { return [] }
        return evaluate(now: now)
    }

    /// The timer `kind` armed with `generation` fired at `now`.
    ///
    /// A stale generation (the timer was cancelled or re-armed since) does nothing. A timer reported before its
    /// deadline is re-armed rather than honoured, so an early wake-up never shortens a delay.
    package mutating func timerFired(_ kind: ActivityIndicatorTimer, generation: UInt64, now: Instant) -> [Action] {
        let armed: ArmedTimer
        switch (current, kind) {
        case (.delayingStart(let timer), .activation), (.delayingEnd(let timer), .completion):
            armed = timer
        default:
            return []
        }
        guard armed.generation == generation else { return [] }
        guard now >= armed.deadline else {
            return [rearm(kind, start: armed.start, deadline: armed.deadline)]
        }
        return expire(kind, now: now)
    }

    /// Enables or disables the manager.
    ///
    /// Disabling forces ``ActivityIndicatorState/notActive`` (cancelling the running timer and hiding the indicator).
    /// Re-enabling re-evaluates at once with the remembered count, where AF would wait for the next count change.
    package mutating func enabledChanged(_ enabled: Bool, now: Instant) -> [Action] {
        guard enabled != isEnabled else { return [] }
        isEnabled = enabled
        if enabled {
            return evaluate(now: now)
        }
        guard state != .notActive else { return [] }
        return transition(to: .notActive, now: now)
    }

    /// The delays are now `activation` and `completion` (clamped into `0...maximumDelay`).
    ///
    /// A running timer whose delay changed is re-armed to fire `delay` after the instant it was first armed; if that
    /// instant is already past, it expires here and now.
    package mutating func delaysChanged(activation: Duration, completion: Duration, now: Instant) -> [Action] {
        activationDelay = Self.clamped(activation)
        completionDelay = Self.clamped(completion)
        switch current {
        case .notActive, .active:
            return []
        case .delayingStart(let armed):
            return retime(.activation, armed: armed, delay: activationDelay, now: now)
        case .delayingEnd(let armed):
            return retime(.completion, armed: armed, delay: completionDelay, now: now)
        }
    }

    // MARK: - Transitions

    /// AF's `updateCurrentStateForNetworkActivityChange`.
    private mutating func evaluate(now: Instant) -> [Action] {
        switch current {
        case .notActive:
            activityCount > 0 ? transition(to: .delayingStart, now: now) : []
        case .delayingStart:
            // As in AF: let the activation timer decide, so a short burst never shows.
            []
        case .active:
            activityCount == 0 ? transition(to: .delayingEnd, now: now) : []
        case .delayingEnd:
            activityCount > 0 ? transition(to: .active, now: now) : []
        }
    }

    /// The timer `kind`, armed in the current state, has run out.
    private mutating func expire(_ kind: ActivityIndicatorTimer, now: Instant) -> [Action] {
        let target: ActivityIndicatorState =
            switch kind {
            case .activation: activityCount > 0 ? .active : .notActive
            case .completion: .notActive
            }
        return transition(to: target, now: now, cancellingArmedTimer: false)
    }

    /// AF's `setCurrentState:`. Entering a state cancels the timer the current state runs (unless that timer is the
    /// one that just expired), arms the new state's timer, and publishes what really changed.
    private mutating func transition(
        to target: ActivityIndicatorState,
        now: Instant,
        cancellingArmedTimer: Bool = true
    ) -> [Action] {
        precondition(target != state, "Invalid transition from \(state) to itself")
        let wasVisible = isVisible
        var actions: [Action] = []
        if cancellingArmedTimer, let armed = armedTimerKind {
            actions.append(.cancelTimer(armed))
        }
        switch target {
        case .notActive:
            current = .notActive
        case .delayingStart:
            let timer = arm(start: now, delay: activationDelay)
            current = .delayingStart(timer)
            actions.append(.armTimer(.activation, deadline: timer.deadline, generation: timer.generation))
        case .active:
            current = .active
        case .delayingEnd:
            let timer = arm(start: now, delay: completionDelay)
            current = .delayingEnd(timer)
            actions.append(.armTimer(.completion, deadline: timer.deadline, generation: timer.generation))
        }
        actions.append(.publishState(target))
        if isVisible != wasVisible {
            actions.append(.setVisible(isVisible))
        }
        return actions
    }

    /// Moves the running timer `kind` to `armed.start + delay`, or expires it now if that is already past.
    private mutating func retime(
        _ kind: ActivityIndicatorTimer,
        armed: ArmedTimer,
        delay: Duration,
        now: Instant
    ) -> [Action] {
        let deadline = armed.start.advanced(by: delay)
        guard deadline != armed.deadline else { return [] }
        if deadline <= now {
            // The owner still holds the old timer: cancel it, then expire without arming anything in its place.
            return [.cancelTimer(kind)] + expire(kind, now: now)
        }
        return [rearm(kind, start: armed.start, deadline: deadline)]
    }

    /// Replaces the running timer `kind` with one of a new generation, in the same state.
    private mutating func rearm(_ kind: ActivityIndicatorTimer, start: Instant, deadline: Instant) -> Action {
        let timer = ArmedTimer(start: start, deadline: deadline, generation: nextGeneration())
        switch kind {
        case .activation: current = .delayingStart(timer)
        case .completion: current = .delayingEnd(timer)
        }
        return .armTimer(kind, deadline: deadline, generation: timer.generation)
    }

    private mutating func arm(start: Instant, delay: Duration) -> ArmedTimer {
        ArmedTimer(start: start, deadline: start.advanced(by: delay), generation: nextGeneration())
    }

    private mutating func nextGeneration() -> UInt64 {
        // Wrapping is unreachable in practice (2^64 timers) and must never trap.
        lastGeneration &+= 1
        return lastGeneration
    }

    private var armedTimerKind: ActivityIndicatorTimer? {
        switch current {
        case .notActive, .active: nil
        case .delayingStart: .activation
        case .delayingEnd: .completion
        }
    }

    private static func clamped(_ delay: Duration) -> Duration {
        min(max(delay, .zero), maximumDelay)
    }
}
