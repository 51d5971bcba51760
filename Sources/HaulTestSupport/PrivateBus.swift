package import Foundation

/// A private `dbus-daemon` for one test: its own socket, its own policy, gone when the test ends.
package final class PrivateBus: Sendable {
    /// The address to connect to (`unix:path=…`).
    package let address: String
    /// The folder holding the bus's socket and configuration, removed on `stop()`.
    package let directory: URL
    private let process: Command.Running

    /// Starts the bus; `serviceDirectory` enables D-Bus activation of the `.service` files found there. Waits off the
    /// concurrency pool until the daemon listens.
    package init(serviceDirectory: URL? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let serviceDir = serviceDirectory.map { "<servicedir>\($0.path)</servicedir>" } ?? ""
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              \(serviceDir)
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <!-- As in session.conf: dbus-daemon's own default lets a connection await only 128 replies. -->
              <limit name="max_replies_per_connection">50000</limit>
            </busconfig>
            """
        let configURL = directory.appendingPathComponent("bus.conf")
        // Not atomic: a throwaway file needs no fsync, which a busy disk makes last seconds.
        try config.write(to: configURL, atomically: false, encoding: .utf8)

        process = try Command.start(
            "/usr/bin/dbus-daemon", ["--config-file=\(configURL.path)", "--nofork", "--print-address=1"]
        )
        // The daemon prints its address once it listens.
        let line: String
        do {
            line = try await process.firstLine(timeout: 30, of: "dbus-daemon")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        address = line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The environment a child process needs to use this bus (and no other).
    package var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        return environment
    }

    /// Stops the daemon where it is (SIGSTOP): it reads nothing until `resume()`, so a client's messages pile up.
    package func pause() {
        kill(process.pid, SIGSTOP)
    }

    /// Lets a paused daemon go on (SIGCONT).
    package func resume() {
        kill(process.pid, SIGCONT)
    }

    package func stop() {
        if process.isRunning {
            resume()  // a stopped daemon would not act on SIGTERM
            kill(process.pid, SIGTERM)
            _ = process.wait()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

package struct TestSupportError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
