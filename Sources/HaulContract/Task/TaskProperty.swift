package import DBusKit

/// The properties of `org.haul.Haul1.Task`, in the contract's order.
package enum TaskProperty: String, ContractProperty {
    case id = "Id"
    /// A ``TaskKindName``.
    case kind = "Kind"
    case url = "URL"
    case path = "Path"
    /// A ``TaskStateName``.
    case state = "State"
    case bytesReceived = "BytesReceived"
    /// -1 while unknown.
    case bytesExpectedToReceive = "BytesExpectedToReceive"
    case bytesSent = "BytesSent"
    /// -1 while unknown.
    case bytesExpectedToSend = "BytesExpectedToSend"
    case downloadProgress = "DownloadProgress"
    case uploadProgress = "UploadProgress"
    /// Bytes per second.
    case rate = "Rate"
    case cancellable = "Cancellable"
    case pausable = "Pausable"
    case resumable = "Resumable"
    /// A ``HaulErrorName/fullName``, empty unless the task failed.
    case errorName = "ErrorName"
    case errorMessage = "ErrorMessage"
    case httpStatus = "HTTPStatus"
    /// Within ``DownloadOption/connectionRange``.
    case connections = "Connections"
    /// The task's own limit in bytes per second (0: none); the Manager's limits still apply.
    case rateLimit = "RateLimit"
    /// Why a queued task waits (`slot`, `retry`, ...); empty in every other state.
    case waitingFor = "WaitingFor"
    /// A ``TaskPriorityName``.
    case priority = "Priority"
    /// May transfer on a metered network: set at creation from the option or the priority, then only when written.
    case allowMetered = "AllowMetered"
    /// The application that created the task: a desktop-file id, else an executable's name, else empty.
    case application = "Application"

    package var type: DBusType {
        switch self {
        case .id, .httpStatus, .connections: .uint32
        case .kind, .url, .path, .state, .errorName, .errorMessage, .waitingFor, .priority,
            .application: .string
        case .bytesReceived, .bytesSent, .rate, .rateLimit: .uint64
        case .bytesExpectedToReceive, .bytesExpectedToSend: .int64
        case .downloadProgress, .uploadProgress: .double
        case .cancellable, .pausable, .resumable, .allowMetered: .boolean
        }
    }

    package var isWritable: Bool {
        switch self {
        case .connections, .rateLimit, .priority, .allowMetered: true
        default: false
        }
    }
}
