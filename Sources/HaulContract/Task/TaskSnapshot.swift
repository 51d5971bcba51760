package import DBusKit

/// A task as a client of the contract sees it: the properties of `org.haul.Haul1.Task`, kept up to date from
/// `GetAll`, `InterfacesAdded` and `PropertiesChanged`. A value that is missing, or not of the contract's type, reads
/// as empty (0, -1 for an unknown size, false, "", nil).
package struct TaskSnapshot: Sendable, Equatable {
    package private(set) var id: UInt32 = 0
    package private(set) var kind: TaskKindName?
    package private(set) var state: TaskStateName?
    package private(set) var url = ""
    /// Why a queued task waits; empty otherwise.
    package private(set) var waitingFor = ""
    /// The local file: a download's destination or an upload's source.
    package private(set) var path = ""
    package private(set) var application = ""
    package private(set) var rate: UInt64 = 0
    package private(set) var isCancellable = false
    package private(set) var isPausable = false
    package private(set) var isResumable = false
    /// `org.haul.Haul1.Error.*`; empty unless the task failed.
    package private(set) var errorName = ""
    package private(set) var errorMessage = ""
    package private(set) var httpStatus: UInt32 = 0
    private var bytesReceived: UInt64 = 0
    private var bytesSent: UInt64 = 0
    private var bytesExpectedToReceive: Int64 = -1
    private var bytesExpectedToSend: Int64 = -1
    private var downloadProgress = 0.0
    private var uploadProgress = 0.0

    /// The task as `GetAll` or `InterfacesAdded` described it. Only what panels read is kept, in fields rather than
    /// the dictionary: a desktop bridge following ten thousand tasks held 2 KB for each.
    package init(properties: [String: DBusValue]) {
        apply(properties)
    }

    /// The task from the entries of its `a{sv}` as they came, which a long list reads faster than hashing them.
    package init(entries: [DBusDictEntry]) {
        for entry in entries {
            if let name = entry.key.stringValue { apply(name, entry.value) }
        }
    }

    /// Applies the `changed_properties` of a `PropertiesChanged` signal.
    package mutating func apply(_ changes: [String: DBusValue]) {
        for (name, value) in changes { apply(name, value) }
    }

    private mutating func apply(_ name: String, _ value: DBusValue) {
        guard let property = TaskProperty(rawValue: name) else { return }
        // A value not of the contract's type reads as empty, as a missing one does.
        let unwrapped = value.unwrapped
        let value = unwrapped.type == property.type ? unwrapped : nil
        switch property {
        case .id: id = value?.uint32Value ?? 0
        case .kind: kind = value?.stringValue.flatMap(TaskKindName.init)
        case .state: state = value?.stringValue.flatMap(TaskStateName.init)
        case .url: url = value?.stringValue ?? ""
        case .waitingFor: waitingFor = value?.stringValue ?? ""
        case .path: path = value?.stringValue ?? ""
        case .application: application = value?.stringValue ?? ""
        case .rate: rate = value?.uint64Value ?? 0
        case .cancellable: isCancellable = value?.boolValue ?? false
        case .pausable: isPausable = value?.boolValue ?? false
        case .resumable: isResumable = value?.boolValue ?? false
        case .errorName: errorName = value?.stringValue ?? ""
        case .errorMessage: errorMessage = value?.stringValue ?? ""
        case .httpStatus: httpStatus = value?.uint32Value ?? 0
        case .bytesReceived: bytesReceived = value?.uint64Value ?? 0
        case .bytesSent: bytesSent = value?.uint64Value ?? 0
        case .bytesExpectedToReceive: bytesExpectedToReceive = value?.int64Value ?? -1
        case .bytesExpectedToSend: bytesExpectedToSend = value?.int64Value ?? -1
        case .downloadProgress: downloadProgress = value?.doubleValue ?? 0
        case .uploadProgress: uploadProgress = value?.doubleValue ?? 0
        default: return
        }
    }

    package var isDownload: Bool { kind == .download }
    /// The bytes moved so far: received by a download, sent by an upload.
    package var bytesDone: UInt64 { isDownload ? bytesReceived : bytesSent }
    /// -1 while unknown.
    package var bytesExpected: Int64 { isDownload ? bytesExpectedToReceive : bytesExpectedToSend }
    /// The fraction done, as hauld reports it (any double: see ``percent``).
    package var fraction: Double { isDownload ? downloadProgress : uploadProgress }

    package var fileName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? url : name
    }

    package var isCompleted: Bool { state == .completed }
    package var isRunning: Bool { state == .running }
    package var isSuspended: Bool { state == .suspended }
    /// Running, suspended or being cancelled: what a panel shows as a job in progress.
    package var isUnfinished: Bool { state != nil && !isCompleted }

    /// The contract's error the task failed with; nil on success, and for a name the contract does not know.
    package var failure: HaulErrorName? { HaulErrorName(fullName: errorName) }
    /// The last element of the error name (`Cancelled`, `HTTP`, …); empty on success.
    package var errorKind: String { errorName.split(separator: ".").last.map(String.init) ?? "" }

    /// Whole percent, when the size is known.
    package var percent: UInt32? {
        guard bytesExpected > 0 else { return isCompleted && errorName.isEmpty ? 100 : nil }
        // A NaN passes min and max unchanged, and would trap in the conversion.
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        return UInt32((clamped * 100).rounded(.down))
    }
}
