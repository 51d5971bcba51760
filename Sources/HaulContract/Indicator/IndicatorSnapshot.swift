package import DBusKit

/// The indicator as a client of the contract sees it: the properties of `org.haul.Haul1.ActivityIndicator`, kept
/// up to date from `GetAll` and `PropertiesChanged`. Until a value arrives, each has hauld's starting value.
package struct IndicatorSnapshot: Sendable, Equatable {
    package var visible = false
    package var state = IndicatorStateName.notActive
    package var activityCount: UInt32 = 0
    package var enabled = IndicatorDefaults.enabled
    package var activationDelay = IndicatorDefaults.activationDelay
    package var completionDelay = IndicatorDefaults.completionDelay

    package init(properties: [String: DBusValue] = [:]) {
        apply(properties)
    }

    /// Merges the values of a `GetAll` reply or of a `PropertiesChanged`'s changes; a value of another type, or a
    /// state the contract does not name, is ignored.
    package mutating func apply(_ properties: [String: DBusValue]) {
        if let value = IndicatorProperty.visible.value(in: properties)?.boolValue { visible = value }
        if let value = IndicatorProperty.state.value(in: properties)?.stringValue.flatMap(IndicatorStateName.init) {
            state = value
        }
        if let value = IndicatorProperty.activityCount.value(in: properties)?.uint32Value { activityCount = value }
        if let value = IndicatorProperty.enabled.value(in: properties)?.boolValue { enabled = value }
        if let value = IndicatorProperty.activationDelay.value(in: properties)?.doubleValue { activationDelay = value }
        if let value = IndicatorProperty.completionDelay.value(in: properties)?.doubleValue { completionDelay = value }
    }
}
