package import DBusKit

/// The properties of `org.haul.Haul1.Manager`.
package enum ManagerProperty: String, ContractProperty {
    /// The connections of a download whose options do not say, in ``DownloadOption/connectionRange``.
    case defaultConnections = "DefaultConnections"

    package var type: DBusType {
        switch self {
        case .defaultConnections: .uint32
        }
    }

    package var isWritable: Bool { true }
}
