/// The persisted, client-settable configuration of the activity indicator (D-Bus `Enabled`, `ActivationDelay`,
/// `CompletionDelay`), in seconds as the bus carries them.
///
/// Fields are plain so they can be set one at a time; ``validate()`` (or ``validatedDelay(_:name:)`` for a single
/// value from the bus) decides whether a value may be used. ``IndicatorSettingsStore`` never returns invalid settings.
package struct IndicatorSettings: Codable, Sendable, Equatable {
    /// The daemon's default for `Enabled`: on (AF defaults to off because an app opts in).
    package static let defaultEnabled = true
    /// The default activation delay, as AF's.
    package static let defaultActivationDelay = 1.0
    /// The default completion delay, as AF's.
    package static let defaultCompletionDelay = 0.17
    /// The longest delay accepted: anything longer is surely a mistake, and bounding it keeps deadlines in range.
    package static let maximumDelaySeconds = 60.0

    /// Whether the indicator reacts to activity.
    package var enabled: Bool
    /// Seconds activity must last before the indicator is shown.
    package var activationDelay: Double
    /// Seconds the indicator stays shown after activity stops.
    package var completionDelay: Double

    /// Creates settings; the defaults are the daemon's.
    package init(
        enabled: Bool = defaultEnabled,
        activationDelay: Double = defaultActivationDelay,
        completionDelay: Double = defaultCompletionDelay
    ) {
        self.enabled = enabled
        self.activationDelay = activationDelay
        self.completionDelay = completionDelay
    }

    private enum CodingKeys: String, CodingKey {
        case enabled, activationDelay, completionDelay
    }

    /// Decodes settings, taking the default for any missing field so that files written by other versions still load.
    /// Values are not validated here: see ``validate()``.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? Self.defaultEnabled
        activationDelay =
            try container.decodeIfPresent(Double.self, forKey: .activationDelay) ?? Self.defaultActivationDelay
        completionDelay =
            try container.decodeIfPresent(Double.self, forKey: .completionDelay) ?? Self.defaultCompletionDelay
    }

    // MARK: - Validation

    /// A delay that cannot be used, with a message fit for a D-Bus `InvalidArgs` reply or a log line.
    package struct InvalidDelay: Error, Sendable, Equatable, CustomStringConvertible {
        /// Why the value was rejected.
        package enum Reason: String, Sendable, Equatable {
            case notFinite = "not a finite number"
            case negative = "negative"
            case tooLong = "longer than the maximum"
        }

        /// The name of the setting, as the caller knows it (`ActivationDelay`, `completionDelay`, …).
        package var name: String
        /// The rejected value, in seconds.
        package var value: Double
        /// Why it was rejected.
        package var reason: Reason

        /// Creates the error for `value` of the setting `name`.
        package init(name: String, value: Double, reason: Reason) {
            self.name = name
            self.value = value
            self.reason = reason
        }

        package var description: String {
            let maximum = Int(IndicatorSettings.maximumDelaySeconds)
            return "\(name) must be a number of seconds from 0 to \(maximum); \(value) is \(reason.rawValue)"
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            // NaN is the value most often rejected, and it must compare equal to itself here.
            lhs.name == rhs.name && lhs.reason == rhs.reason
                && (lhs.value == rhs.value || (lhs.value.isNaN && rhs.value.isNaN))
        }
    }

    /// Whether `seconds` is a usable delay: finite, at least 0 and at most ``maximumDelaySeconds``.
    package static func isValidDelay(_ seconds: Double) -> Bool {
        invalidReason(for: seconds) == nil
    }

    /// Checks `seconds` and converts it for ``ActivityIndicatorStateMachine``; `name` is used in the error message.
    package static func validatedDelay(_ seconds: Double, name: String) throws(InvalidDelay) -> Duration {
        if let reason = invalidReason(for: seconds) {
            throw InvalidDelay(name: name, value: seconds, reason: reason)
        }
        return duration(seconds: seconds)
    }

    /// Throws for the first invalid delay, named as its field.
    package func validate() throws(InvalidDelay) {
        _ = try Self.validatedDelay(activationDelay, name: CodingKeys.activationDelay.rawValue)
        _ = try Self.validatedDelay(completionDelay, name: CodingKeys.completionDelay.rawValue)
    }

    /// ``activationDelay`` as a `Duration`, for validated settings; an invalid value is clamped rather than trapping.
    package var activationDuration: Duration { Self.duration(seconds: activationDelay) }

    /// ``completionDelay`` as a `Duration`, for validated settings; an invalid value is clamped rather than trapping.
    package var completionDuration: Duration { Self.duration(seconds: completionDelay) }

    private static func invalidReason(for seconds: Double) -> InvalidDelay.Reason? {
        if !seconds.isFinite { return .notFinite }
        if seconds < 0 { return .negative }
        if seconds > maximumDelaySeconds { return .tooLong }
        return nil
    }

    /// Rounds to whole nanoseconds, so that 0.17 s is exactly `.milliseconds(170)` and not 0.17 s give or take a few
    /// attoseconds; `Duration.seconds(_: Double)` would also trap on NaN.
    private static func duration(seconds: Double) -> Duration {
        let bounded = seconds.isNaN ? 0 : min(max(seconds, 0), maximumDelaySeconds)
        return .nanoseconds(Int64((bounded * 1e9).rounded()))
    }
}
