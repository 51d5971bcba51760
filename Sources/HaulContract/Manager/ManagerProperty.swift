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
    /// `online`, `limited`, `portal`, `offline` or `unknown` (no NetworkManager).
    case networkState = "NetworkState"
    /// The network is metered.
    case metered = "Metered"
    /// The active power profile is `power-saver`.
    case powerSaver = "PowerSaver"
    /// Keep the machine from sleeping while foreground tasks run.
    case inhibitSleep = "InhibitSleep"

    package var type: DBusType {
        switch self {
        case .defaultConnections, .maxRunningTasks: .uint32
        case .downloadRateLimit, .uploadRateLimit: .uint64
        case .networkState: .string
        case .metered, .powerSaver, .inhibitSleep: .boolean
        }
    }

    package var isWritable: Bool {
        switch self {
        case .networkState, .metered, .powerSaver: false
        case .defaultConnections, .downloadRateLimit, .uploadRateLimit, .maxRunningTasks, .inhibitSleep: true
        }
    }
}
