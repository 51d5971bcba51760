import DBusKit
import HaulContract
import HaulDesktop

/// Tasks as the contract shows them, for the desktop bridge's tests.
enum Tasks {
    static func download(
        _ state: TaskStateName = .running, bytes: UInt64 = 0, expected: Int64 = -1, rate: UInt64 = 0,
        error: HaulErrorName? = nil, message: String = "", file: String = "/home/u/Downloads/debian.iso", id: UInt32 = 1
    ) -> TaskSnapshot {
        TaskSnapshot(
            properties: properties(
                state, bytes: bytes, expected: expected, rate: rate, error: error, message: message, file: file, id: id
            )
        )
    }

    /// A download queued for `reason`.
    static func queued(_ reason: WaitingForName, file: String = "/home/u/Downloads/debian.iso", id: UInt32 = 1)
        -> TaskSnapshot
    {
        var properties = properties(.queued, file: file, id: id)
        properties[TaskProperty.waitingFor.name] = .string(reason.rawValue)
        return TaskSnapshot(properties: properties)
    }

    /// Every property of `org.haul.Haul1.Task` for such a download, as `InterfacesAdded` carries them.
    static func properties(
        _ state: TaskStateName = .running, bytes: UInt64 = 0, expected: Int64 = -1, rate: UInt64 = 0,
        error: HaulErrorName? = nil, message: String = "", file: String = "/home/u/Downloads/debian.iso", id: UInt32 = 1
    ) -> [String: DBusValue] {
        TaskProperty.values([
            .id: .uint32(id), .kind: .string(TaskKindName.download.rawValue),
            .url: .string("https://example.org/debian.iso"), .path: .string(file), .state: .string(state.rawValue),
            .bytesReceived: .uint64(bytes), .bytesExpectedToReceive: .int64(expected), .bytesSent: .uint64(0),
            .bytesExpectedToSend: .int64(0),
            .downloadProgress: .double(expected > 0 ? Double(bytes) / Double(expected) : 0),
            .uploadProgress: .double(0), .rate: .uint64(rate), .cancellable: .boolean(state != .completed),
            .pausable: .boolean(state != .completed), .resumable: .boolean(true),
            .errorName: .string(error?.fullName ?? ""), .errorMessage: .string(message),
            .httpStatus: .uint32(error == .http ? 404 : 200), .connections: .uint32(1),
        ])
    }
}
