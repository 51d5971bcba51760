package import DBusKit

/// The properties of `org.haul.Haul1.Manager`.
package enum ManagerProperty: String, ContractProperty {
    /// The connections of a download whose options do not say, in ``DownloadOption/connectionRange``.
    case defaultConnections = "DefaultConnections"
    /// Bytes per second for all downloads together (0: none).
    case downloadRateLimit = "DownloadRateLimit"
    /// Bytes per second for all uploads together (0: none).
    case uploadRateLimit = "UploadRateLimit"
    /// How many tasks transfer at once (0: no limit); the others are queued.
    case maxRunningTasks = "MaxRunningTasks"

    package var type: DBusType {
        switch self {
        case .defaultConnections, .maxRunningTasks: .uint32
        case .downloadRateLimit, .uploadRateLimit: .uint64
        }
    }

    package var isWritable: Bool { true }
}
