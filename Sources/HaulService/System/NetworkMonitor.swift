package import DBusKit
package import HaulCore

/// What NetworkManager says of the network, on the system bus: its `Connectivity`, `State` and `Metered`
/// (`org.freedesktop.NetworkManager` on `/org/freedesktop/NetworkManager`), their changes, and NetworkManager coming
/// and going.
///
/// ```swift
/// let monitor = NetworkMonitor(connection: systemBus)
/// async let following: Void = monitor.run()
/// for await reading in monitor.readings { … reading.state, reading.metered … }
/// ```
package final class NetworkMonitor: Sendable {
    /// The network as NetworkManager describes it.
    package struct Reading: Sendable, Hashable {
        package var state: NetworkState
        /// `Metered` is 1 (yes) or 3 (guess-yes).
        package var metered: Bool

        package init(state: NetworkState, metered: Bool) {
            self.state = state
            self.metered = metered
        }

        /// No NetworkManager, or nothing usable from it: behave as without one.
        package static let absent = Reading(state: .unknown, metered: false)
    }

    /// The first reading once `run()` has looked, then every change (never the same reading twice in a row).
    /// Ends with `.absent` (unless that was the last) when `run()` returns.
    package let readings: AsyncStream<Reading>
    private let continuation: AsyncStream<Reading>.Continuation
    private let follower: PropertyFollower

    package init(connection: DBusConnection) {
        follower = PropertyFollower(
            connection: connection, name: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager",
            interface: "org.freedesktop.NetworkManager"
        )
        (readings, continuation) = AsyncStream.makeStream(of: Reading.self)
    }

    /// Follows NetworkManager until the task is cancelled or the connection closes. Call it once.
    package func run() async {
        var last: Reading?
        try? await follower.run { properties in
            let reading = Self.reading(properties)
            guard reading != last else { return }
            last = reading
            continuation.yield(reading)
        }
        if last != .absent { continuation.yield(.absent) }
        continuation.finish()
    }

    /// The reading for NetworkManager's properties (nil: NetworkManager is not on the bus).
    ///
    /// A property that is missing or of another type than `u` counts as unknown: without a known `Connectivity`
    /// (1–4) nor a `State`, the state is `.unknown`, as without NetworkManager, rather than offline on the word of a
    /// service that says nothing usable.
    package static func reading(_ properties: [String: DBusValue]?) -> Reading {
        guard let properties else { return .absent }
        let connectivity = properties["Connectivity"]?.uint32Value ?? 0
        let state = properties["State"]?.uint32Value
        let metered = properties["Metered"]?.uint32Value.map(NetworkState.isMetered(networkManagerMetered:)) ?? false
        if state == nil, !(1...4).contains(connectivity) {
            return Reading(state: .unknown, metered: metered)
        }
        return Reading(state: NetworkState(connectivity: connectivity, state: state ?? 0), metered: metered)
    }
}
