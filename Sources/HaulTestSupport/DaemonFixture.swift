package import DBusKit
package import Foundation
package import HaulContract

/// hauld running on its own private bus, with a client connection.
package struct DaemonFixture {
    package let bus: PrivateBus
    package let hauld: HauldProcess
    package let client: DBusConnection

    /// A fixture around a hauld the caller started (``with(stateDirectory:arguments:launcher:environment:_:)`` starts
    /// its own).
    package init(bus: PrivateBus, hauld: HauldProcess, client: DBusConnection) {
        self.bus = bus
        self.hauld = hauld
        self.client = client
    }

    package static func with(
        stateDirectory: URL? = nil, arguments: [String] = [], launcher: [String] = [],
        environment: [String: String] = [:], _ body: (DaemonFixture) async throws -> Void
    ) async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let hauld = try await HauldProcess(
            bus: bus, stateDirectory: stateDirectory, arguments: arguments, launcher: launcher,
            environment: environment
        )
        let client = try await DBusConnection.connect(address: bus.address)
        try await body(DaemonFixture(bus: bus, hauld: hauld, client: client))
        await client.close()
        _ = await hauld.stop()
    }

    /// hauld's contract as typed calls over the fixture's client.
    package var calls: HauldCalls { HauldCalls(client) }

    package func indicatorProperty(_ property: IndicatorProperty, on connection: DBusConnection? = nil) async throws
        -> DBusValue
    {
        try await HauldCalls(connection ?? client).property(property)
    }

    package func setIndicator(_ property: IndicatorProperty, _ value: DBusValue) async throws {
        try await calls.set(property, to: value)
    }

    package func callIndicator(_ method: IndicatorMethod, on connection: DBusConnection? = nil) async throws {
        try await HauldCalls(connection ?? client).call(method)
    }
}
