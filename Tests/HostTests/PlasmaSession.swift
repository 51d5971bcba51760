import DBusKit
import Foundation
import HaulTestSupport
import Synchronization

/// A real Plasma 5 desktop for one test, headless: an `Xvfb` screen, and on a private session bus `kded5` (it owns
/// `org.kde.StatusNotifierWatcher`) and `plasmashell` (the panel with its system tray, KDE's job view server and the
/// notification server), in a throwaway home whose file manager is a script (``openedFolder``). The bus starts Plasma's other services itself (kactivitymanagerd,
/// kglobalaccel5, …) from their service files, in the session's environment (`UpdateActivationEnvironment`): they
/// abort without the screen.
///
/// Every process of the session carries a marker variable in its environment; ``stop()`` ends each of them by its
/// process id (kactivitymanagerd, kglobalaccel5 and kded5 outlive the bus), then the screen and the bus.
final class PlasmaSession: Sendable {
    let bus: PrivateBus
    /// The throwaway home: configuration, caches and the programs' logs.
    let home: URL
    /// `:N`, the screen's display.
    let display: String
    private let marker: (name: String, value: String)
    private let folderHandler: FolderHandler
    private let screen: Command.Running
    /// kded5 and plasmashell, reaped by ``stop()``.
    private let programs = Mutex<[Command.Running]>([])

    static let width = 1280
    static let height = 800

    /// Runs `body` with a started session, stopping it afterwards, also when `body` throws. The programs' logs go to
    /// `artefacts`.
    static func with(artefacts: ArtefactFolder, _ body: (PlasmaSession) async throws -> Void) async throws {
        let session = try await PlasmaSession(artefacts: artefacts)
        do {
            try await body(session)
        } catch {
            await session.stop()
            throw error
        }
        await session.stop()
    }

    private init(artefacts: ArtefactFolder) async throws {
        bus = try await PrivateBus(serviceDirectory: URL(fileURLWithPath: "/usr/share/dbus-1/services"))
        home = bus.directory.appendingPathComponent("plasma-home")
        marker = ("HAUL_PLASMA_SESSION", UUID().uuidString)
        // Before Plasma starts: KDE's own opener (kde-open5, which xdg-open runs here) finds handlers in the cache
        // kded5 builds.
        folderHandler = try FolderHandler(home: home, directory: bus.directory)
        // -displayfd: Xvfb picks a free display and writes its number once it accepts connections.
        screen = try Command.start(
            "/usr/bin/Xvfb",
            ["-displayfd", "1", "-screen", "0", "\(Self.width)x\(Self.height)x24", "-nolisten", "tcp"]
        )
        do {
            display = ":" + (try await screen.firstLine(timeout: 60))
        } catch {
            kill(screen.pid, SIGKILL)
            _ = await Command.finish(screen)
            bus.stop()
            throw error
        }
        do {
            try await start(artefacts: artefacts)
        } catch {
            await stop()
            throw error
        }
    }

    /// The environment of the session's programs: the screen, KDE's session variables, the throwaway home.
    var environment: [String: String] {
        [
            "DISPLAY": display, "QT_QUICK_BACKEND": "software", "QT_QPA_PLATFORM": "xcb", "XDG_CURRENT_DESKTOP": "KDE",
            "KDE_FULL_SESSION": "true", "KDE_SESSION_VERSION": "5", "HOME": home.path,
            "XDG_RUNTIME_DIR": home.appendingPathComponent("runtime").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path, "LANG": "C.UTF-8",
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/local/bin:/usr/bin:/bin", marker.name: marker.value,
        ]
    }

    private func start(artefacts: ArtefactFolder) async throws {
        let runtime = home.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        let connection = try await DBusConnection.connect(address: bus.address)
        do {
            try await start(on: connection, artefacts: artefacts)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    private func start(on connection: DBusConnection, artefacts: ArtefactFolder) async throws {
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "UpdateActivationEnvironment",
            [.dictionary(key: .string, value: .string, environment.map { DBusDictEntry(.string($0), .string($1)) })]
        )
        for program in ["kded5", "plasmashell"] {
            // Through a shell that sends the output to a file: a pipe nobody reads would fill and stop the program.
            let running = try Command.start(
                "/bin/sh", ["-c", "exec \"$0\" >\"$1\" 2>&1", "/usr/bin/\(program)", artefacts.path("\(program).log")],
                environment: environment
            )
            programs.withLock { $0.append(running) }
        }
        let names = ["org.kde.StatusNotifierWatcher", "org.kde.JobViewServer", "org.freedesktop.Notifications"]
        try await waitUntil("Plasma's services to be on the bus", timeout: .seconds(120), every: .milliseconds(250)) {
            for name in names where try await !connection.nameHasOwner(name) { return false }
            // The tray's host: once it is there, items registered are shown.
            let host = try? await connection.call(
                destination: "org.kde.StatusNotifierWatcher", path: "/StatusNotifierWatcher",
                interface: "org.freedesktop.DBus.Properties", member: "Get",
                [.string("org.kde.StatusNotifierWatcher"), .string("IsStatusNotifierHostRegistered")]
            )
            return host?.first?.unwrapped == .boolean(true)
        }
        // The desktop drawn (its wallpaper, not the black of an empty screen): before, plasmashell may show nothing
        // of what it is sent.
        let desktop = artefacts.path("desktop.png")
        try await waitUntil("plasmashell to draw the desktop", timeout: .seconds(120), every: .milliseconds(500)) {
            try await screenshot(desktop)
            let area = ImageProbe.Rectangle(x: 0, y: 0, width: Self.width, height: Self.height - 100)
            let black = ImageProbe.Color(red: 0, green: 0, blue: 0)
            return try await ImageProbe.meanColor(of: desktop, in: area).distance(to: black) > 40
        }
    }

    /// A PNG of the whole screen.
    func screenshot(_ path: String) async throws {
        let result = try await Command.run(
            "/usr/bin/import", ["-display", display, "-window", "root", path], environment: environment
        )
        guard result.status == 0 else { throw TestSupportError("import failed: \(result.stderr)") }
    }

    /// What the home's file manager was last asked to show (a path or a file: URI), nil before anything: a script
    /// (``FolderHandler``) stands in for Dolphin.
    var openedFolder: String? { folderHandler.openedFolder }

    /// Clicks the mouse's `button` (1 left, 3 right) at `x`, `y`, with xdotool.
    func click(x: Int, y: Int, button: Int = 1) async throws {
        try await xdotool(["mousemove", "--sync", "\(x)", "\(y)", "click", "\(button)"])
    }

    /// Moves the pointer to `x`, `y`, with xdotool.
    func movePointer(x: Int, y: Int) async throws {
        try await xdotool(["mousemove", "--sync", "\(x)", "\(y)"])
    }

    private func xdotool(_ arguments: [String]) async throws {
        let result = try await Command.run("/usr/bin/xdotool", arguments, environment: environment)
        guard result.status == 0 else { throw TestSupportError("xdotool \(arguments) failed: \(result.stderr)") }
    }

    /// Ends every process of the session by its id (kded5, plasmashell and what the bus started for them), SIGKILL
    /// for those still there after 10 s, then the screen and the bus.
    func stop() async {
        for id in Self.processes(carrying: marker) { kill(id, SIGTERM) }
        let ended: Void? = try? await waitUntil("Plasma's processes to end", timeout: .seconds(10)) {
            Self.processes(carrying: self.marker).isEmpty
        }
        if ended == nil {
            for id in Self.processes(carrying: marker) { kill(id, SIGKILL) }
        }
        for program in programs.withLock({ $0 }) { _ = await Command.finish(program) }
        if screen.isRunning {
            kill(screen.pid, SIGTERM)
            _ = await Command.finish(screen)
        }
        bus.stop()
    }

    /// The processes whose environment holds `marker`, as `/proc/PID/environ` shows it (only this user's are
    /// readable, and only this session's carry it).
    private static func processes(carrying marker: (name: String, value: String)) -> [pid_t] {
        let wanted = Data("\(marker.name)=\(marker.value)".utf8)
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { pid_t($0) } ?? []
        return ids.filter { id in
            guard id != getpid(), let environ = FileManager.default.contents(atPath: "/proc/\(id)/environ") else {
                return false
            }
            return environ.split(separator: 0).contains { $0 == wanted }
        }
    }

    /// A session that ``stop()`` did not end (its start failed half-way) loses at least its screen.
    deinit {
        if screen.isRunning { kill(screen.pid, SIGKILL) }
    }
}
