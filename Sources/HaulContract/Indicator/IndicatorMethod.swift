package import DBusKit

/// The methods of `org.haul.Haul1.ActivityIndicator`: manual activity, held by the calling connection.
package enum IndicatorMethod: String, ContractMethod {
    case incrementActivityCount = "IncrementActivityCount"
    case decrementActivityCount = "DecrementActivityCount"

    package var declaration: DBusInterfaceDescription.Method { .init(rawValue) }
}
