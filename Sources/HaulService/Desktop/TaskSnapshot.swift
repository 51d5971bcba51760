package import DBusKit

/// A task as a client of the contract sees it: the properties of `org.haul.Haul1.Task`, kept up to date from
/// `InterfacesAdded` and `PropertiesChanged`. The desktop bridge knows tasks only through this.
package struct TaskSnapshot: Sendable, Equatable {
    package private(set) var properties: [String: DBusValue]

    package init(properties: [String: DBusValue]) {
        self.properties = properties.mapValues(\.unwrapped)
    }

    /// Applies the `changed_properties` of a `PropertiesChanged` signal.
    package mutating func apply(_ changes: [String: DBusValue]) {
        properties.merge(changes.mapValues(\.unwrapped)) { $1 }
    }

    package var id: UInt32 { properties["Id"]?.uint32Value ?? 0 }
    package var state: String { properties["State"]?.stringValue ?? "" }
    package var isDownload: Bool { properties["Kind"]?.stringValue != "upload" }
    package var url: String { properties["URL"]?.stringValue ?? "" }
    /// The local file: a download's destination or an upload's source.
    package var path: String { properties["Path"]?.stringValue ?? "" }
    package var fileName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? url : name
    }
    package var bytesDone: UInt64 { properties[isDownload ? "BytesReceived" : "BytesSent"]?.uint64Value ?? 0 }
    /// -1 while unknown.
    package var bytesExpected: Int64 {
        properties[isDownload ? "BytesExpectedToReceive" : "BytesExpectedToSend"]?.int64Value ?? -1
    }
    package var fraction: Double { properties[isDownload ? "DownloadProgress" : "UploadProgress"]?.doubleValue ?? 0 }
    package var rate: UInt64 { properties["Rate"]?.uint64Value ?? 0 }
    package var isCancellable: Bool { properties["Cancellable"]?.boolValue ?? false }
    package var isPausable: Bool { properties["Pausable"]?.boolValue ?? false }
    /// `org.haul.Haul1.Error.*`; empty unless the task failed.
    package var errorName: String { properties["ErrorName"]?.stringValue ?? "" }
    package var errorMessage: String { properties["ErrorMessage"]?.stringValue ?? "" }
    package var httpStatus: UInt32 { properties["HTTPStatus"]?.uint32Value ?? 0 }

    package var isCompleted: Bool { state == "completed" }
    package var isRunning: Bool { state == "running" }
    package var isSuspended: Bool { state == "suspended" }
    /// Running, suspended or being cancelled: what a panel shows as a job in progress.
    package var isUnfinished: Bool { !state.isEmpty && !isCompleted }
    /// The last element of the error name (`Cancelled`, `HTTP`, …); empty on success.
    package var errorKind: String {
        errorName.split(separator: ".").last.map(String.init) ?? ""
    }
    /// Whole percent, when the size is known.
    package var percent: UInt32? {
        guard bytesExpected > 0 else { return isCompleted && errorName.isEmpty ? 100 : nil }
        // A NaN passes min and max unchanged, and would trap in the conversion.
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        return UInt32((clamped * 100).rounded(.down))
    }
}
