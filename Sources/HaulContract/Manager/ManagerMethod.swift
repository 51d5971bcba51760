package import DBusKit

/// The methods of `org.haul.Haul1.Manager`, in the contract's order.
package enum ManagerMethod: String, ContractMethod {
    case download = "Download"
    case downloadWithOptions = "DownloadWithOptions"
    case upload = "Upload"
    case uploadWithOptions = "UploadWithOptions"
    case listTasks = "ListTasks"
    case suspendAll = "SuspendAll"
    case resumeAll = "ResumeAll"
    case cancelAll = "CancelAll"

    package var declaration: DBusInterfaceDescription.Method {
        typealias Argument = DBusInterfaceDescription.Argument
        let url = Argument("url", .string)
        let task = [Argument("task", .objectPath)]
        let options = Argument("options", .dictionary(key: .string, value: .variant))
        switch self {
        case .download:
            return .init(rawValue, inputs: [url, .init("destination", .string)], outputs: task)
        case .downloadWithOptions:
            return .init(rawValue, inputs: [url, .init("destination", .string), options], outputs: task)
        case .upload:
            return .init(rawValue, inputs: [url, .init("source", .string)], outputs: task)
        case .uploadWithOptions:
            return .init(rawValue, inputs: [url, .init("source", .string), options], outputs: task)
        case .listTasks:
            return .init(rawValue, outputs: [.init("tasks", .array(.objectPath))])
        case .suspendAll, .resumeAll, .cancelAll:
            return .init(rawValue)
        }
    }
}
