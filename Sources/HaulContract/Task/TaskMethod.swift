package import DBusKit

/// The methods of `org.haul.Haul1.Task`.
package enum TaskMethod: String, ContractMethod {
    case suspend = "Suspend"
    case resume = "Resume"
    case cancel = "Cancel"
    /// Removes a completed task.
    case forget = "Forget"
    /// Gives a suspended or queued task a new URL, keeping its bytes.
    case setURL = "SetURL"
    /// Runs a task that failed again, from the bytes it kept.
    case retry = "Retry"

    package var declaration: DBusInterfaceDescription.Method {
        switch self {
        case .suspend, .resume, .cancel, .forget, .retry: .init(rawValue)
        case .setURL: .init(rawValue, inputs: [.init("url", .string)])
        }
    }
}
