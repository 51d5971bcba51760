package import DBusKit

/// The methods of `org.haul.Haul1.Task`.
package enum TaskMethod: String, ContractMethod {
    case suspend = "Suspend"
    case resume = "Resume"
    /// Runs a task that failed again; on an unfinished task, `Resume`.
    case retry = "Retry"
    case cancel = "Cancel"
    /// Removes a completed task.
    case forget = "Forget"
    /// Gives a suspended or queued task a new URL, keeping its bytes.
    case setURL = "SetURL"

    package var declaration: DBusInterfaceDescription.Method {
        switch self {
        case .suspend, .resume, .retry, .cancel, .forget: .init(rawValue)
        case .setURL: .init(rawValue, inputs: [.init("url", .string)])
        }
    }
}
