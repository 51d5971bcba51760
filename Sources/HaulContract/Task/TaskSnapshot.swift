package import DBusKit

/// A task as a client of the contract sees it: the properties of `org.haul.Haul1.Task`, kept up to date from
/// `GetAll`, `InterfacesAdded` and `PropertiesChanged`. A value that is missing, or not of the contract's type, reads
/// as empty (0, -1 for an unknown size, false, "", nil).
package struct TaskSnapshot: Sendable, Equatable {
    package private(set) var properties: [String: DBusValue]

    package init(properties: [String: DBusValue]) {
        self.properties = properties.mapValues(\.unwrapped)
    }

    /// Applies the `changed_properties` of a `PropertiesChanged` signal.
    package mutating func apply(_ changes: [String: DBusValue]) {
        properties.merge(changes.mapValues(\.unwrapped)) { $1 }
    }

    package subscript(_ property: TaskProperty) -> DBusValue? { property.value(in: properties) }

    package var id: UInt32 { self[.id]?.uint32Value ?? 0 }
    package var kind: TaskKindName? { self[.kind]?.stringValue.flatMap(TaskKindName.init) }
    package var state: TaskStateName? { self[.state]?.stringValue.flatMap(TaskStateName.init) }
    package var url: String { self[.url]?.stringValue ?? "" }
    /// Why a queued task waits; empty otherwise.
    package var waitingFor: String { self[.waitingFor]?.stringValue ?? "" }
    /// The local file: a download's destination or an upload's source.
    package var path: String { self[.path]?.stringValue ?? "" }
    package var application: String { self[.application]?.stringValue ?? "" }
    package var rate: UInt64 { self[.rate]?.uint64Value ?? 0 }
    package var isCancellable: Bool { self[.cancellable]?.boolValue ?? false }
    package var isPausable: Bool { self[.pausable]?.boolValue ?? false }
    package var isResumable: Bool { self[.resumable]?.boolValue ?? false }
    /// `org.haul.Haul1.Error.*`; empty unless the task failed.
    package var errorName: String { self[.errorName]?.stringValue ?? "" }
    package var errorMessage: String { self[.errorMessage]?.stringValue ?? "" }
    package var httpStatus: UInt32 { self[.httpStatus]?.uint32Value ?? 0 }

    package var isDownload: Bool { kind == .download }
    /// The bytes moved so far: received by a download, sent by an upload.
    package var bytesDone: UInt64 { self[isDownload ? .bytesReceived : .bytesSent]?.uint64Value ?? 0 }
    /// -1 while unknown.
    package var bytesExpected: Int64 {
        self[isDownload ? .bytesExpectedToReceive : .bytesExpectedToSend]?.int64Value ?? -1
    }
    /// The fraction done, as hauld reports it (any double: see ``percent``).
    package var fraction: Double { self[isDownload ? .downloadProgress : .uploadProgress]?.doubleValue ?? 0 }

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
