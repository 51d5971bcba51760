package import Foundation
import DBusKit
import HaulContract

/// A `hauld` built by this package, running on a private bus with its own state directory.
package final class HauldProcess: Sendable {
    package let running: Command.Running
    package let stateDirectory: URL

    /// Starts hauld on `bus` and waits until it — not an earlier one the bus has yet to drop — owns
    /// `org.haul.Haul1`. A `launcher` (a command that ends by exec'ing its arguments, such as `setpriv …`) runs
    /// hauld under changed conditions; it must keep the process id. The proxy and certificate variables of the
    /// tests' own environment are not passed on (a test's servers are on loopback); `environment` adds variables.
    /// `DBUS_SYSTEM_BUS_ADDRESS` names a socket that does not exist unless `environment` gives one.
    package init(
        bus: PrivateBus, stateDirectory: URL? = nil, arguments: [String] = [], launcher: [String] = [],
        environment extra: [String: String] = [:]
    ) async throws {
        let state = stateDirectory ?? bus.directory.appendingPathComponent("state")
        self.stateDirectory = state
        var environment = bus.environment.filter {
            !Self.proxyVariables.contains($0.key) && !Self.trustVariables.contains($0.key)
        }
        environment["XDG_STATE_HOME"] = state.path
        // A home of its own (made when first needed), so that a download into the user's folder ("") never touches
        // the real one; XDG_CONFIG_HOME with it, where user-dirs.dirs is read.
        let home = state.appendingPathComponent("home")
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        // Never the machine's own system bus: a test that wants one passes a FakeSystemBus's `environment`; without
        // it hauld finds no system bus at all, as on a machine without one.
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + bus.directory.appendingPathComponent("no-system-bus").path
        environment.merge(extra) { $1 }
        let command = launcher + [Command.built("hauld")] + arguments
        running = try Command.start(command[0], Array(command.dropFirst()), environment: environment)
        let probe = try await DBusConnection.connect(address: bus.address)
        defer { Task { await probe.close() } }
        try await waitUntil("hauld to take \(HaulBus.name)", timeout: .seconds(20)) { [running] in
            guard running.isRunning else { throw TestSupportError("hauld exited before it took \(HaulBus.name)") }
            return try await Self.ownedBy(running.pid, probe)
        }
    }

    package var pid: Int32 { running.pid }

    /// Certificates the tests' own environment may name: a test gives hauld its own CA when it wants one.
    package static let trustVariables: Set<String> = ["SSL_CERT_FILE", "SSL_CERT_DIR"]

    package static let proxyVariables: Set<String> = [
        "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
    ]

    private static func ownedBy(_ pid: Int32, _ probe: DBusConnection) async throws -> Bool {
        guard let owner = try? await probe.nameOwner(HaulBus.name) else { return false }
        let reply = try? await probe.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", [.string(owner)]
        )
        return reply?.first?.uint32Value == UInt32(bitPattern: pid)
    }

    /// Runs `body`; when it throws, stops hauld and throws the error again with what hauld logged, which a test of
    /// a host that cannot be watched (a desktop's reaction, in CI) needs to be understood.
    package func explainingFailure<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            let output = await stop()
            throw TestSupportError("\(error)\nhauld logged:\n\(output.stderr)")
        }
    }

    /// Sends `signal` and collects the exit status and output.
    package func stop(signal: Int32 = SIGTERM) async -> CommandResult {
        kill(running.pid, signal)
        return await Command.finish(running)
    }

    deinit {
        if running.isRunning { kill(running.pid, SIGKILL) }
    }
}
