import DBusKit
import Foundation
import HaulContract
import HaulTestSupport

/// hauld running on its own private bus, with a client connection.
struct DaemonFixture {
    let bus: PrivateBus
    let hauld: HauldProcess
    let client: DBusConnection

    static let name = HaulBus.name
    static let manager = HaulBus.managerPath
    static let indicator = HaulBus.indicatorInterface

    static func with(
        stateDirectory: URL? = nil, arguments: [String] = [], launcher: [String] = [],
        environment: [String: String] = [:], _ body: (DaemonFixture) async throws -> Void
    ) async throws {
        let bus = try PrivateBus()
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

    func indicatorProperty(_ property: IndicatorProperty, on connection: DBusConnection? = nil) async throws
        -> DBusValue
    {
        try await (connection ?? client).property(
            destination: Self.name, path: Self.manager, interface: Self.indicator, name: property.name
        )
    }

    func setIndicator(_ property: IndicatorProperty, _ value: DBusValue) async throws {
        try await client.setProperty(
            destination: Self.name, path: Self.manager, interface: Self.indicator, name: property.name, value: value
        )
    }

    func callIndicator(_ method: IndicatorMethod, on connection: DBusConnection? = nil) async throws {
        _ = try await (connection ?? client).call(
            destination: Self.name, path: Self.manager, interface: Self.indicator, member: method.rawValue
        )
    }
}
