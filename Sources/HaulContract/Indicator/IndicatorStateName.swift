/// The indicator's `State`, as the bus spells it.
package enum IndicatorStateName: String, Sendable, CaseIterable {
    case notActive = "not-active"
    case delayingStart = "delaying-start"
    case active = "active"
    case delayingEnd = "delaying-end"
}
