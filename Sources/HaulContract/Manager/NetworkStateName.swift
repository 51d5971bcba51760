/// The Manager's `NetworkState`, as the bus spells it.
package enum NetworkStateName: String, Sendable, CaseIterable {
    case online
    /// A local network only.
    case limited
    /// A captive portal.
    case portal
    case offline
    /// No NetworkManager on the system bus: treated as online.
    case unknown
}
