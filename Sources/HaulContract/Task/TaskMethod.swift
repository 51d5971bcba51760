package import DBusKit

/// The methods of `org.haul.Haul1.Task`.
package enum TaskMethod: String, ContractMethod {
    case suspend = "Suspend"
    case resume = "Resume"
    case cancel = "Cancel"
    /// Removes a completed task.
    case forget = "Forget"

    package var declaration: DBusInterfaceDescription.Method { .init(rawValue) }
}
