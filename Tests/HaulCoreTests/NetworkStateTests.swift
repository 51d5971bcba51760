import HaulCore
import Testing

/// `NetworkState` and `Metered` from NetworkManager's numbers, exactly as the contract derives them.
@Suite("Network state", .timeLimit(.minutes(2)))
struct NetworkStateTests {
    @Test(arguments: [
        (UInt32(1), NetworkState.offline), (2, .portal), (3, .limited), (4, .online),
    ])
    func aKnownConnectivityDecides(_ connectivity: UInt32, _ expected: NetworkState) {
        for state: UInt32 in [0, 10, 20, 40, 50, 60, 70] {
            #expect(NetworkState(connectivity: connectivity, state: state) == expected, "State \(state)")
        }
    }

    /// NMState: 0 unknown, 10 asleep, 20 disconnected, 30 disconnecting, 40 connecting, 50 connected-local,
    /// 60 connected-site, 70 connected-global.
    @Test(arguments: [
        (UInt32(0), NetworkState.offline), (10, .offline), (20, .offline), (30, .offline), (40, .offline),
        (49, .offline), (50, .limited), (55, .limited), (60, .limited), (61, .offline), (69, .offline),
        (70, .online), (71, .online), (UInt32.max, .online),
    ])
    func anUnknownConnectivityLeavesItToState(_ state: UInt32, _ expected: NetworkState) {
        #expect(NetworkState(connectivity: 0, state: state) == expected)
        #expect(NetworkState(connectivity: 5, state: state) == expected, "a value from a newer NetworkManager")
        #expect(NetworkState(connectivity: .max, state: state) == expected)
    }

    @Test func onlyOfflineAndPortalHoldAttempts() {
        let holding = NetworkState.allCases.filter { !$0.allowsAttempts }
        #expect(holding == [.portal, .offline])
    }

    /// NMMetered: 0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no.
    @Test(arguments: [(UInt32(0), false), (1, true), (2, false), (3, true), (4, false), (5, false), (.max, false)])
    func meteredIsYesOrGuessYes(_ value: UInt32, _ expected: Bool) {
        #expect(NetworkState.isMetered(networkManagerMetered: value) == expected)
    }

    @Test func meteredDefaultsFollowThePriority() {
        #expect(TransferPriority.foreground.allowsMeteredByDefault)
        #expect(!TransferPriority.background.allowsMeteredByDefault)
        #expect(TransferPriority.foreground < .background)
    }
}
