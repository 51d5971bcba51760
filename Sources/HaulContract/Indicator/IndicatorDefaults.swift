/// The indicator's settings until a client writes them, and the delays it accepts.
package enum IndicatorDefaults {
    package static let enabled = true
    /// Seconds activity must last before the indicator shows, as AFNetworking's.
    package static let activationDelay = 1.0
    /// Seconds the indicator stays after activity ends, as AFNetworking's.
    package static let completionDelay = 0.17
    /// `ActivationDelay` and `CompletionDelay` in seconds; anything else (negative, NaN, infinite, longer) is refused.
    package static let delayRange: ClosedRange<Double> = 0...60
}
