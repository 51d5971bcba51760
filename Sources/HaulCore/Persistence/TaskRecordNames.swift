/// How a task record spells its enums: as hauld has written them since its first version (see ``RecordNamed``).
/// A new case needs a new name here, never a changed one.

extension TransferKind: RecordNamed {
    static var recordDescription: String { "a task kind" }

    var recordName: String {
        switch self {
        case .download: "download"
        case .upload: "upload"
        }
    }
}

extension TransferTaskState: RecordNamed {
    static var recordDescription: String { "a task state" }

    var recordName: String {
        switch self {
        case .running: "running"
        case .suspended: "suspended"
        case .canceling: "canceling"
        case .completed: "completed"
        }
    }
}

extension TransferErrorKind: RecordNamed {
    static var recordDescription: String { "a transfer error kind" }

    var recordName: String {
        switch self {
        case .invalidArgument: "InvalidArgument"
        case .notFound: "NotFound"
        case .fileExists: "FileExists"
        case .permissionDenied: "PermissionDenied"
        case .network: "Network"
        case .http: "HTTP"
        case .cancelled: "Cancelled"
        case .checksumMismatch: "ChecksumMismatch"
        case .diskFull: "DiskFull"
        case .timeout: "Timeout"
        }
    }
}

extension UploadOptions.Method: RecordNamed {
    static var recordDescription: String { "an upload method" }

    var recordName: String {
        switch self {
        case .put: "PUT"
        case .post: "POST"
        }
    }
}

extension TransferPriority: RecordNamed {
    static var recordDescription: String { "a task priority" }

    var recordName: String {
        switch self {
        case .foreground: "foreground"
        case .background: "background"
        }
    }
}
