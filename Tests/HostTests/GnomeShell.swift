import DBusKit
import Foundation
import HaulContract
import HaulTestSupport

/// A real GNOME Shell for one test: `gnome-shell --headless --virtual-monitor 1280x800` with Haul's extension
/// installed and enabled, in a throwaway home, on a private session bus, with a private bus as its system bus (it
/// dies on logind without one). Started with the extension's test hook (`HAUL_SHELL_TEST_BUS=1`), which the test
/// reads and clicks through (``describe()``, ``activate(_:)``), and it takes screenshots as GNOME's own
/// Screenshot tool does.
///
/// The session bus activates only dconf (with the throwaway home) and a stand-in for hauld's activation that merely
/// leaves a mark: ``hauldWasActivated`` says whether anything ever asked the bus to start hauld. The home's default
/// file manager is a script that notes the folder it was asked to show (``openedFolder``).
final class GnomeShell: Sendable {
    let sessionBus: PrivateBus
    private let systemBus: PrivateBus
    private let shell: Command.Running
    private let client: DBusConnection
    /// The throwaway home and runtime folder, removed by ``stop()``.
    private let directory: URL
    private let activationMark: URL
    private let folderHandler: FolderHandler
    /// The shell's own output, kept beside the screenshots.
    let log: String

    static let uuid = "haul@haul.org"
    static let hookPath: ObjectPath = "/org/gnome/Shell/Extensions/Haul"
    static let hookInterface = "org.haul.ShellExtension.TestHook"
    static let shellName = "org.gnome.Shell"
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `body` with a started shell, stopping it (and every bus) afterwards, also when `body` throws.
    static func with(artefacts: ArtefactFolder, _ body: (GnomeShell) async throws -> Void) async throws {
        let shell = try await GnomeShell(artefacts: artefacts)
        do {
            try await body(shell)
        } catch {
            await shell.stop()
            throw error
        }
        await shell.stop()
    }

    private init(artefacts: ArtefactFolder) async throws {
        let files = FileManager.default
        directory = files.temporaryDirectory.appendingPathComponent("haul-gnome-\(UUID().uuidString)")
        let home = directory.appendingPathComponent("home")
        let runtime = directory.appendingPathComponent("runtime")
        let services = directory.appendingPathComponent("services")
        for folder in [home, runtime, services] {
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        activationMark = directory.appendingPathComponent("hauld-was-activated")
        log = artefacts.path("gnome-shell.log")

        var environment = ProcessInfo.processInfo.environment.filter {
            !["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"]
                .contains($0.key) && !$0.key.hasPrefix("XDG_")
        }
        environment["HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        environment["LANG"] = "C.UTF-8"

        // dconf and the shell's notification service (org.freedesktop.Notifications) as the bus would start them, but
        // in the throwaway home (a service inherits the bus's environment, which is the test's); and hauld's name,
        // whose activation only leaves the mark.
        let homeVariables = ["HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"]
            .map { "\($0)=\(environment[$0] ?? "")" }.joined(separator: " ")
        for service in ["ca.desrt.dconf.service", "org.gnome.Shell.Notifications.service"] {
            let file = try String(contentsOfFile: "/usr/share/dbus-1/services/\(service)", encoding: .utf8)
            try file.replacingOccurrences(of: "Exec=", with: "Exec=/usr/bin/env \(homeVariables) ")
                .write(to: services.appendingPathComponent(service), atomically: true, encoding: .utf8)
        }
        try "[D-BUS Service]\nName=\(HaulBus.name)\nExec=/usr/bin/touch \(activationMark.path)\n"
            .write(to: services.appendingPathComponent("\(HaulBus.name).service"), atomically: true, encoding: .utf8)

        systemBus = try await PrivateBus()
        sessionBus = try await PrivateBus(serviceDirectory: services)
        environment["DBUS_SESSION_BUS_ADDRESS"] = sessionBus.address
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address

        folderHandler = try FolderHandler(home: home, directory: directory)

        // The extension where a user's is, enabled before the shell starts.
        let extensions = home.appendingPathComponent(".local/share/gnome-shell/extensions/\(Self.uuid)")
        let assemble = Self.repository.appendingPathComponent("integrations/gnome-shell/assemble.sh").path
        try await Self.run(assemble, [extensions.path], environment: environment)
        try await Self.run("gsettings", ["set", "org.gnome.shell", "enabled-extensions", "['\(Self.uuid)']"],
                           environment: environment)
        try await Self.run("gsettings", ["set", "org.gnome.shell", "disable-user-extensions", "false"],
                           environment: environment)

        environment["HAUL_SHELL_TEST_BUS"] = "1"
        shell = try Command.start(
            "/bin/sh", ["-c", "exec gnome-shell --headless --no-x11 --virtual-monitor 1280x800 >\"$0\" 2>&1", log],
            environment: environment
        )
        client = try await DBusConnection.connect(address: sessionBus.address)
        // GNOME 43 takes screenshots only for the names it trusts, GNOME's Screenshot tool among them.
        _ = try await client.requestName("org.gnome.Screenshot")
        try await waitUntil("gnome-shell to enable the extension", timeout: .seconds(60)) { [shell, log] in
            guard shell.isRunning else {
                let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw TestSupportError("gnome-shell exited: \(output)")
            }
            return (try? await self.describe()) != nil
        }
    }

    private static func run(_ command: String, _ arguments: [String], environment: [String: String]) async throws {
        let result = try await Command.run(command, arguments, environment: environment)
        guard result.status == 0 else {
            throw TestSupportError("\(command) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    /// The environment hauld gets, as the session's bus or systemd gives it: the same throwaway home and desktop, and
    /// the shell's Wayland display (where `xdg-open` opens what a notification's button asks for).
    var hauldEnvironment: [String: String] {
        let home = directory.appendingPathComponent("home")
        return [
            "HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_RUNTIME_DIR": directory.appendingPathComponent("runtime").path, "XDG_CURRENT_DESKTOP": "GNOME",
            "WAYLAND_DISPLAY": "wayland-0",
        ]
    }

    /// A file in the throwaway home.
    func homeFile(_ name: String) -> String {
        directory.appendingPathComponent("home").appendingPathComponent(name).path
    }

    /// What the home's file manager was last asked to show (a path or a file: URI), nil before anything.
    var openedFolder: String? { folderHandler.openedFolder }

    /// Whether anything asked the session bus to start hauld.
    var hauldWasActivated: Bool { FileManager.default.fileExists(atPath: activationMark.path) }

    // MARK: The test hook

    /// What the extension's button and menu show.
    func describe() async throws -> ExtensionView {
        let reply = try await hook("Describe")
        guard let json = reply.first?.stringValue else { throw TestSupportError("Describe answered \(reply)") }
        return try JSONDecoder().decode(ExtensionView.self, from: Data(json.utf8))
    }

    /// Waits until what the extension shows satisfies `condition`; a timeout tells what it showed last.
    func waitForView(
        _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: (ExtensionView) -> Bool
    ) async throws {
        var last: ExtensionView?
        try await waitUntil(what(), timeout: timeout, seen: { "\(String(describing: last))" }) {
            let view = try await describe()
            last = view
            return condition(view)
        }
    }

    func openMenu() async throws { _ = try await hook("OpenMenu") }

    func closeMenu() async throws { _ = try await hook("CloseMenu") }

    /// Activates the menu item `labels` lead to, as a click does; false when there is none or it is greyed.
    func activate(_ labels: [String]) async throws -> Bool {
        try await hook("Activate", [.array(.string, labels.map(DBusValue.string))]).first?.boolValue ?? false
    }

    /// The shell's banners: the one it shows and those queued behind it, each as "title: body"; and whether its
    /// start-up, when it queues banners of its own, is still to complete.
    struct Banners: Decodable, Sendable {
        var startingUp: Bool
        var shown: String?
        var queued: [String]

        var none: Bool { !startingUp && shown == nil && queued.isEmpty }
    }

    func banners() async throws -> Banners {
        let reply = try await hook("Banners")
        guard let json = reply.first?.stringValue else { throw TestSupportError("Banners answered \(reply)") }
        return try JSONDecoder().decode(Banners.self, from: Data(json.utf8))
    }

    /// Waits until the shell has completed its start-up, which greets root with two banners ("Logged in as a
    /// privileged user", "Screen Lock disabled"), and shows or queues none, moving the pointer while one shows (a
    /// banner stays until the user is active). A notification that found three in the way would get no banner at all.
    func clearBanners() async throws {
        var last: Banners?
        var quiet = 0
        try await waitUntil("the shell's own banners to go", timeout: .seconds(60), every: .seconds(1), seen: {
            "\(String(describing: last))"
        }) {
            let banners = try await banners()
            last = banners
            if banners.shown != nil { try await nudgePointer() }
            // The second is queued once a file is written, a moment after the first.
            quiet = banners.none ? quiet + 1 : 0
            return quiet == 2
        }
    }

    private func hook(_ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: Self.shellName, path: Self.hookPath, interface: Self.hookInterface, member: member, body,
            timeout: .seconds(10)
        )
    }

    /// Moves the pointer a little: GNOME keeps a banner up until the user is active, then for four seconds.
    func nudgePointer() async throws {
        try await remoteDesktop { pointer in
            try await pointer("NotifyPointerMotionRelative", [.double(4), .double(4)])
            try await pointer("NotifyPointerMotionRelative", [.double(-4), .double(-4)])
        }
    }

    /// Moves the pointer to `x`, `y` of the screen: into the top left corner first, where the screen's edges stop it
    /// (mutter takes absolute positions only for a screen cast), then right along the top, then down: a diagonal
    /// from the corner would run into the barrier of the Activities hot corner.
    func movePointer(x: Int, y: Int) async throws {
        try await remoteDesktop { pointer in
            try await pointer("NotifyPointerMotionRelative", [.double(-10_000), .double(-10_000)])
            try await pointer("NotifyPointerMotionRelative", [.double(Double(x)), .double(0)])
            try await pointer("NotifyPointerMotionRelative", [.double(0), .double(Double(y))])
        }
    }

    /// Clicks the left button where the pointer is.
    func click() async throws {
        // BTN_LEFT of linux/input-event-codes.h.
        let left = Int32(0x110)
        try await remoteDesktop { pointer in
            try await pointer("NotifyPointerButton", [.int32(left), .boolean(true)])
            try await pointer("NotifyPointerButton", [.int32(left), .boolean(false)])
        }
    }

    /// Runs `body` in a session of mutter's remote desktop API (`org.gnome.Mutter.RemoteDesktop`, on the test's
    /// connection), giving it the session's calls by member and arguments.
    private func remoteDesktop(
        _ body: (_ pointer: (String, [DBusValue]) async throws -> Void) async throws -> Void
    ) async throws {
        let service = "org.gnome.Mutter.RemoteDesktop"
        let sessionInterface = "\(service).Session"
        let reply = try await client.call(
            destination: service, path: "/org/gnome/Mutter/RemoteDesktop", interface: service, member: "CreateSession"
        )
        guard case .objectPath(let session)? = reply.first else { throw TestSupportError("CreateSession: \(reply)") }
        _ = try await client.call(destination: service, path: session, interface: sessionInterface, member: "Start")
        try await body { member, arguments in
            _ = try await client.call(
                destination: service, path: session, interface: sessionInterface, member: member, arguments
            )
        }
        _ = try await client.call(destination: service, path: session, interface: sessionInterface, member: "Stop")
    }

    /// Takes a screenshot of the whole screen into `path`.
    func screenshot(_ path: String) async throws {
        let reply = try await client.call(
            destination: Self.shellName, path: "/org/gnome/Shell/Screenshot", interface: "org.gnome.Shell.Screenshot",
            member: "Screenshot", [.boolean(false), .boolean(false), .string(path)], timeout: .seconds(20)
        )
        guard reply.first?.boolValue == true else { throw TestSupportError("Screenshot answered \(reply)") }
    }

    /// A shell that ``stop()`` did not end (its start failed) is killed.
    deinit {
        if shell.isRunning { kill(shell.pid, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Ends the shell (SIGKILL when SIGTERM is not enough within 10 s) and the buses, and removes the home.
    func stop() async {
        await client.close()
        if shell.isRunning {
            kill(shell.pid, SIGTERM)
            if (try? await waitUntil("gnome-shell to exit", timeout: .seconds(10)) { !self.shell.isRunning }) == nil {
                kill(shell.pid, SIGKILL)
            }
            _ = await Command.finish(shell)
        }
        sessionBus.stop()
        systemBus.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
