package import DBusKit

/// The signals of `org.haul.Haul1.ActivityIndicator`.
package enum IndicatorSignal: String, Sendable, CaseIterable {
    /// `Visible` really changed; its one argument is the new value.
    case visibilityChanged = "VisibilityChanged"

    package var declaration: DBusInterfaceDescription.Signal {
        switch self {
        case .visibilityChanged: .init(rawValue, [.init("visible", .boolean)])
        }
    }
}
