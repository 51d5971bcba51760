/// What the network allows (the bus spells it as `NetworkStateName`), derived from NetworkManager's properties.
package enum NetworkState: Sendable, Hashable, CaseIterable {
    /// Full connectivity.
    case online
    /// A local network only: attempts proceed with the ordinary retry rules.
    case limited
    /// A captive portal: attempts wait, so that its login page is never written into a download.
    case portal
    /// No network: attempts wait.
    case offline
    /// No NetworkManager on the system bus: treated as online, so hauld behaves as it would without one.
    case unknown

    /// Derives the state from NetworkManager's `Connectivity` (`NMConnectivityState`) and `State` (`NMState`).
    ///
    /// `Connectivity` decides when it is known (1 none, 2 portal, 3 limited, 4 full). When it is 0 (unknown: the
    /// check is disabled or has not run) — or a value this code does not know — `State` decides: 70
    /// (connected-global) and above is online, 50–60 (connected-local, connected-site) limited, anything else
    /// (asleep, disconnected, connecting…) offline.
    package init(connectivity: UInt32, state: UInt32) {
        switch connectivity {
        case 1: self = .offline
        case 2: self = .portal
        case 3: self = .limited
        case 4: self = .online
        default:
            switch state {
            case 70...: self = .online
            case 50...60: self = .limited
            default: self = .offline
            }
        }
    }

    /// Whether attempts may start: `offline` and `portal` make them wait for the network.
    package var allowsAttempts: Bool {
        switch self {
        case .online, .limited, .unknown: true
        case .portal, .offline: false
        }
    }

    /// Whether NetworkManager's `Metered` (`NMMetered`) says the connection costs: 1 (yes) or 3 (guess-yes).
    /// 0 (unknown), 2 (no) and 4 (guess-no) do not, nor does a value this code does not know.
    package static func isMetered(networkManagerMetered value: UInt32) -> Bool {
        value == 1 || value == 3
    }
}
