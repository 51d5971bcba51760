public import DBusKit

/// A task as a client of the contract sees it: the properties of `org.haul.Haul1.Task`, kept up to date from
/// `InterfacesAdded` and `PropertiesChanged`. The desktop bridge knows tasks only through this.
public struct TaskSnapshot: Sendable, Equatable {
    public private(set) var properties: [String: DBusValue]

    public init(properties: [String: DBusValue]) {
        self.properties = properties.mapValues(\.unwrapped)
    }

    /// Applies the `changed_properties` of a `PropertiesChanged` signal.
    public mutating func apply(_ changes: [String: DBusValue]) {
        properties.merge(changes.mapValues(\.unwrapped)) { $1 }
    }

    public var id: UInt32 { properties["Id"]?.uint32Value ?? 0 }
    public var state: String { properties["State"]?.stringValue ?? "" }
    public var isDownload: Bool { properties["Kind"]?.stringValue != "upload" }
    public var url: String { properties["URL"]?.stringValue ?? "" }
    /// The local file: a download's destination or an upload's source.
    public var path: String { properties["Path"]?.stringValue ?? "" }
    public var fileName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? url : name
    }
    public var bytesDone: UInt64 { properties[isDownload ? "BytesReceived" : "BytesSent"]?.uint64Value ?? 0 }
    /// -1 while unknown.
    public var bytesExpected: Int64 {
        properties[isDownload ? "BytesExpectedToReceive" : "BytesExpectedToSend"]?.int64Value ?? -1
    }
    public var fraction: Double { properties[isDownload ? "DownloadProgress" : "UploadProgress"]?.doubleValue ?? 0 }
    public var rate: UInt64 { properties["Rate"]?.uint64Value ?? 0 }
    public var isCancellable: Bool { properties["Cancellable"]?.boolValue ?? false }
    public var isPausable: Bool { properties["Pausable"]?.boolValue ?? false }
    /// `org.haul.Haul1.Error.*`; empty unless the task failed.
    public var errorName: String { properties["ErrorName"]?.stringValue ?? "" }
    public var errorMessage: String { properties["ErrorMessage"]?.stringValue ?? "" }
    public var httpStatus: UInt32 { properties["HTTPStatus"]?.uint32Value ?? 0 }

    public var isCompleted: Bool { state == "completed" }
    public var isRunning: Bool { state == "running" }
    public var isSuspended: Bool { state == "suspended" }
    /// Running, suspended or being cancelled: what a panel shows as a job in progress.
    public var isUnfinished: Bool { !state.isEmpty && !isCompleted }
    /// The last element of the error name (`Cancelled`, `HTTP`, …); empty on success.
    public var errorKind: String {
        errorName.split(separator: ".").last.map(String.init) ?? ""
    }
    /// Whole percent, when the size is known.
    public var percent: UInt32? {
        guard bytesExpected > 0 else { return isCompleted && errorName.isEmpty ? 100 : nil }
        // A NaN passes min and max unchanged, and would trap in the conversion.
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        return UInt32((clamped * 100).rounded(.down))
    }
}
