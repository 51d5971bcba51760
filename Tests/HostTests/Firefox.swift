import Foundation
import HaulTestSupport

/// Debian's Firefox ESR, headless, in a fresh profile and home with the Haul extension of this repository installed
/// (unsigned, for the session) and the host built by this package, driven over WebDriver BiDi.
struct Firefox {
    let socket: BrowserSocket
    /// The browser's own download folder.
    let downloads: URL
    /// What the browser (and the hosts it starts) wrote to standard output and error.
    let log: URL
    /// The tab the tests use.
    let context: JSON

    /// Starts Firefox with `environment` (the test's private bus), runs `body` once the extension is installed,
    /// then closes the browser and removes its profile.
    static func with(environment: [String: String], _ body: (Firefox) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-firefox-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("profile")
        let downloads = directory.appendingPathComponent("downloads")
        let home = directory.appendingPathComponent("home")
        let hosts = home.appendingPathComponent(".mozilla/native-messaging-hosts")
        for folder in [profile, downloads, hosts] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // Downloads go to the folder without asking; nothing reaches beyond loopback.
        let preferences = [
            "browser.download.folderList": "2", "browser.download.dir": "\"\(downloads.path)\"",
            "browser.download.useDownloadDir": "true", "browser.download.always_ask_before_handling_new_types": "false",
            "browser.shell.checkDefaultBrowser": "false", "datareporting.policy.dataSubmissionEnabled": "false",
            "app.update.disabledForTesting": "true", "network.proxy.type": "0",
            "browser.startup.homepage_override.mstone": "\"ignore\"",
        ]
        let userJS = preferences.map { "user_pref(\"\($0.key)\", \($0.value));" }.joined(separator: "\n")
        try userJS.write(to: profile.appendingPathComponent("user.js"), atomically: true, encoding: .utf8)
        // Firefox reads host manifests from ~/.mozilla/native-messaging-hosts.
        try BrowserExtension.hostManifest(.firefox).write(to: hosts.appendingPathComponent("org.haul.haul.json"))

        var environment = environment
        environment["HOME"] = home.path
        let log = directory.appendingPathComponent("firefox.log")
        let process = try BrowserProcess.start(
            "/usr/bin/firefox-esr",
            ["--headless", "--no-remote", "--profile", profile.path, "--remote-debugging-port", "0", "about:blank"],
            environment: environment, log: log
        )
        try await BrowserProcess.whileRunning(process) {
            try await drive(process, profile: profile, downloads: downloads, log: log, body)
        }
    }

    private static func drive(
        _ process: Command.Running, profile: URL, downloads: URL, log: URL,
        _ body: (Firefox) async throws -> Void
    ) async throws {
        // With port 0, Firefox names the port it took in the profile.
        let portFile = profile.appendingPathComponent("WebDriverBiDiServer.json")
        var port: Int?
        try await waitUntil("Firefox's WebDriver BiDi port", timeout: .seconds(90)) {
            guard process.isRunning else { throw BrowserSocket.ProtocolError(description: "Firefox exited") }
            port = (try? JSON(parsing: Data(contentsOf: portFile)))?["ws_port"].int
            return port != nil
        }
        try await BrowserSocket.with(port: port ?? 0, path: "/session") { socket in
            try await socket.command("session.new", ["capabilities": [:]])
            try await socket.command(
                "session.subscribe", ["events": ["browsingContext.downloadWillBegin", "browsingContext.downloadEnd"]]
            )
            // Answers once the extension has started, its event page and listeners included.
            let extensionData: JSON = ["type": "path", "path": .string(BrowserExtension.directory.path)]
            try await socket.command("webExtension.install", ["extensionData": extensionData])
            let context = try await socket.command("browsingContext.getTree")["contexts"][0]["context"]
            try await body(Firefox(socket: socket, downloads: downloads, log: log, context: context))
            _ = try? await socket.command("browser.close")
        }
    }

    /// Loads `url` in the tab and checks that it ended at `expected`.
    func open(_ url: String, expecting expected: String) async throws {
        let result = try await socket.command(
            "browsingContext.navigate", ["context": context, "url": .string(url), "wait": "complete"]
        )
        guard result["url"].string == expected else {
            throw BrowserSocket.ProtocolError(description: "\(url) ended at \(result["url"]), not \(expected)")
        }
    }

    /// Clicks the element with id `id` as a user would: the pointer moved onto it, pressed and released.
    func click(_ id: String) async throws {
        let nodes = try await socket.command(
            "browsingContext.locateNodes", ["context": context, "locator": ["type": "css", "value": .string("#\(id)")]]
        )["nodes"]
        let element: JSON = ["sharedId": nodes[0]["sharedId"]]
        let pointer: JSON = [
            "type": "pointer", "id": "mouse",
            "actions": [
                ["type": "pointerMove", "x": 0, "y": 0, "origin": ["type": "element", "element": element]],
                ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
            ],
        ]
        try await socket.command("input.performActions", ["context": context, "actions": [pointer]])
    }

    /// How the tab's downloads ended so far (`canceled`, `complete`), by the browser's download events.
    func downloadEnds() -> [String] {
        socket.events("browsingContext.downloadEnd").compactMap { $0["params"]["status"].string }
    }
}
