package import Foundation
import DBusKit

/// A real Plasma 5 desktop for one test, headless: an `Xvfb` screen, and on the test's private bus `kded5` (it
/// owns `org.kde.StatusNotifierWatcher`) and `plasmashell` (the panel with its system tray, KDE's job view server
/// and the notification server). The bus starts Plasma's other services itself (kactivitymanagerd, kglobalaccel5,
/// …) from their service files, in the session's environment (`UpdateActivationEnvironment`), so that they find
/// the screen and keep to the session's throwaway home.
///
/// Every process of the session carries a marker variable in its environment; `stop()` ends each of them by its
/// process id (some outlive the bus), and the screen.
package final class PlasmaSession: Sendable {
    package let bus: PrivateBus
    /// The throwaway home: configuration, caches and logs (`kded5.log`, `plasmashell.log`).
    package let home: URL
    /// `:N`, the screen's display.
    package let display: String
    private let marker: String
    private let path: String?
    private let screen: Command.Running

    /// Whether Plasma and the tools the tests use are installed (scripts/install-deps.sh test installs them).
    package static var isInstalled: Bool {
        ["/usr/bin/plasmashell", "/usr/bin/kded5", "/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/import"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the screen, then kded5 and plasmashell, and returns once the tray, the job view server and the
    /// notification server are on the bus (a few seconds). `path` is put before the system's `PATH` (a folder with
    /// a fake `xdg-open`, say).
    package init(width: Int = 1280, height: Int = 800, path: String? = nil) async throws {
        bus = try PrivateBus(serviceDirectory: URL(fileURLWithPath: "/usr/share/dbus-1/services"))
        home = bus.directory.appendingPathComponent("plasma-home")
        marker = "HAUL_PLASMA_SESSION=\(UUID().uuidString)"
        self.path = path
        // -displayfd: Xvfb picks a free display and writes its number once it accepts connections.
        screen = try Command.start(
            "/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"]
        )
        var number = Data()
        while !number.contains(UInt8(ascii: "\n")) {
            let chunk = screen.stdout.availableData
            guard !chunk.isEmpty else { throw TestSupportError("Xvfb exited before it chose a display") }
            number.append(chunk)
        }
        display = ":" + String(decoding: number, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            try await start()
        } catch {
            stop()
            throw error
        }
    }

    /// The environment of the session's programs: the screen, KDE's session variables, the throwaway home.
    package var environment: [String: String] {
        let runtime = home.appendingPathComponent("runtime").path
        let system = "/usr/local/bin:/usr/bin:/bin"
        return [
            "DISPLAY": display, "QT_QUICK_BACKEND": "software", "QT_QPA_PLATFORM": "xcb", "XDG_CURRENT_DESKTOP": "KDE",
            "KDE_FULL_SESSION": "true", "KDE_SESSION_VERSION": "5", "HOME": home.path, "XDG_RUNTIME_DIR": runtime,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path, "LANG": "C.UTF-8",
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": path.map { "\($0):\(system)" } ?? system,
            String(marker.prefix { $0 != "=" }): String(marker.drop { $0 != "=" }.dropFirst()),
        ]
    }

    private func start() async throws {
        let runtime = home.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        let connection = try await DBusConnection.connect(address: bus.address)
        defer { Task { await connection.close() } }
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "UpdateActivationEnvironment",
            [.dictionary(key: .string, value: .string, environment.map { DBusDictEntry(.string($0), .string($1)) })]
        )
        for program in ["kded5", "plasmashell"] {
            // Through a shell that sends the output to a file: a pipe nobody reads would fill and stop the program.
            let log = home.appendingPathComponent("\(program).log").path
            _ = try Command.start(
                "/bin/sh", ["-c", "exec \"$0\" >\"$1\" 2>&1", "/usr/bin/\(program)", log], environment: environment
            )
        }
        let names = ["org.kde.StatusNotifierWatcher", "org.kde.JobViewServer", "org.freedesktop.Notifications"]
        try await waitUntil("Plasma's services to be on the bus", timeout: .seconds(60)) {
            for name in names where (try? await connection.nameOwner(name)) == nil { return false }
            // The tray's host: once it is there, items registered are shown.
            let host = try? await connection.call(
                destination: "org.kde.StatusNotifierWatcher", path: "/StatusNotifierWatcher",
                interface: "org.freedesktop.DBus.Properties", member: "Get",
                [.string("org.kde.StatusNotifierWatcher"), .string("IsStatusNotifierHostRegistered")]
            )
            return host?.first?.unwrapped == .boolean(true)
        }
    }

    /// A PNG of the whole screen.
    package func screenshot(to file: URL) async throws {
        let result = try await Command.run(
            "/usr/bin/import", ["-display", display, "-window", "root", file.path], environment: environment
        )
        guard result.status == 0 else { throw TestSupportError("import failed: \(result.stderr)") }
    }

    /// Runs `xdotool` on the session's screen (`mousemove X Y click 1`, …).
    package func xdotool(_ arguments: [String]) async throws {
        let result = try await Command.run("/usr/bin/xdotool", arguments, environment: environment)
        guard result.status == 0 else { throw TestSupportError("xdotool \(arguments) failed: \(result.stderr)") }
    }

    /// Clicks the mouse's `button` (1 left, 3 right) at `x`, `y`.
    package func click(x: Int, y: Int, button: Int = 1) async throws {
        try await xdotool(["mousemove", "--sync", "\(x)", "\(y)", "click", "\(button)"])
    }

    /// Ends every process of the session by its id (kded5, plasmashell and what the bus started for them, some of
    /// which would outlive it), then the screen and the bus.
    package func stop() {
        let ids = Self.processes(carrying: marker)
        for id in ids { kill(id, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline, !Self.processes(carrying: marker).isEmpty { usleep(50_000) }
        for id in Self.processes(carrying: marker) { kill(id, SIGKILL) }
        if screen.isRunning { kill(screen.pid, SIGTERM) }
        bus.stop()
    }

    /// The processes whose environment holds `entry`, as `/proc/PID/environ` shows it (only this user's are
    /// readable, and only this session's carry the entry).
    private static func processes(carrying entry: String) -> [pid_t] {
        let wanted = Data(entry.utf8)
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { pid_t($0) } ?? []
        return ids.filter { id in
            guard id != getpid(), let environ = FileManager.default.contents(atPath: "/proc/\(id)/environ") else {
                return false
            }
            return environ.split(separator: 0).contains { $0 == wanted }
        }
    }

    deinit { stop() }
}
