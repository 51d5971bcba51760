/// The four states of the delayed activity manager, named as the D-Bus `State` property spells them.
///
/// They mirror `AFNetworkActivityManagerState`: the indicator is visible exactly in ``active`` and ``delayingEnd``.
package enum ActivityIndicatorState: String, Sendable, Hashable, CaseIterable {
    /// No activity worth showing; the indicator is hidden and no timer runs.
    case notActive = "not-active"
    /// Activity started; the activation timer runs, and the indicator stays hidden until it fires.
    case delayingStart = "delaying-start"
    /// Activity lasted long enough to be noticed; the indicator is shown.
    case active = "active"
    /// Activity stopped; the completion timer runs, and the indicator stays shown until it fires.
    case delayingEnd = "delaying-end"
}

/// The two timers of the delayed activity manager.
package enum ActivityIndicatorTimer: String, Sendable, Hashable, CaseIterable {
    /// Runs in ``ActivityIndicatorState/delayingStart`` for the activation delay.
    case activation
    /// Runs in ``ActivityIndicatorState/delayingEnd`` for the completion delay.
    case completion
}
