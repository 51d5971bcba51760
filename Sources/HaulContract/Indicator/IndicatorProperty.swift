package import DBusKit

/// The properties of `org.haul.Haul1.ActivityIndicator`, in the contract's order.
package enum IndicatorProperty: String, ContractProperty {
    case visible = "Visible"
    /// An ``IndicatorStateName``.
    case state = "State"
    case activityCount = "ActivityCount"
    case enabled = "Enabled"
    /// Seconds, within ``IndicatorDefaults/delayRange``.
    case activationDelay = "ActivationDelay"
    /// Seconds, within ``IndicatorDefaults/delayRange``.
    case completionDelay = "CompletionDelay"

    package var type: DBusType {
        switch self {
        case .visible, .enabled: .boolean
        case .state: .string
        case .activityCount: .uint32
        case .activationDelay, .completionDelay: .double
        }
    }

    package var isWritable: Bool {
        switch self {
        case .visible, .state, .activityCount: false
        case .enabled, .activationDelay, .completionDelay: true
        }
    }
}
