import DBusKit
import Testing

/// Where `DBusConnection.systemBus()` connects: `DBUS_SYSTEM_BUS_ADDRESS` (how tests put a private bus in the system
/// bus's place), else libdbus's well-known socket.
@Suite struct SystemBusAddressTests {
    @Test func theVariableWins() {
        #expect(DBusConnection.systemBusAddress(environment: "unix:path=/tmp/x/bus") == "unix:path=/tmp/x/bus")
    }

    @Test(arguments: [nil, ""])
    func unsetOrEmptyIsTheWellKnownSocket(_ value: String?) {
        #expect(DBusConnection.systemBusAddress(environment: value) == "unix:path=/var/run/dbus/system_bus_socket")
    }
}
