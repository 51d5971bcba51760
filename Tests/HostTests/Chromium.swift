import Foundation
import HaulTestSupport

/// Debian's Chromium, headless, in a fresh profile with the Haul extension of this repository and the host built by
/// this package, driven over the DevTools protocol. A reused profile would keep running an old service worker.
struct Chromium {
    let socket: BrowserSocket
    /// The browser's own download folder.
    let downloads: URL
    /// What the browser (and the hosts it starts) wrote to standard output and error.
    let log: URL

    /// Starts Chromium with `environment` (the test's private bus), runs `body` once the extension's service worker
    /// runs, then closes the browser and removes its profile.
    static func with(environment: [String: String], _ body: (Chromium) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-chromium-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("profile")
        let downloads = directory.appendingPathComponent("downloads")
        let folders = ["Default", "NativeMessagingHosts"].map { profile.appendingPathComponent($0) }
            + [downloads, directory.appendingPathComponent("home")]
        for folder in folders {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let preferences: JSON = [
            "download": ["default_directory": .string(downloads.path), "prompt_for_download": false]
        ]
        try preferences.data.write(to: profile.appendingPathComponent("Default/Preferences"))
        // With --user-data-dir, Chromium reads host manifests from the profile, not from ~/.config/chromium.
        try BrowserExtension.hostManifest(.chromium)
            .write(to: profile.appendingPathComponent("NativeMessagingHosts/org.haul.haul.json"))

        var environment = environment
        environment["HOME"] = directory.appendingPathComponent("home").path
        let log = directory.appendingPathComponent("chromium.log")
        let process = try BrowserProcess.start(
            "/usr/bin/chromium",
            [
                "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
                "--user-data-dir=\(profile.path)",
                "--load-extension=\(BrowserExtension.directory.path)",
                "--disable-extensions-except=\(BrowserExtension.directory.path)",
                "--remote-debugging-port=0", "about:blank",
            ],
            environment: environment, log: log
        )
        try await BrowserProcess.whileRunning(process) {
            try await drive(process, profile: profile, downloads: downloads, log: log, body)
        }
    }

    private static func drive(
        _ process: Command.Running, profile: URL, downloads: URL, log: URL,
        _ body: (Chromium) async throws -> Void
    ) async throws {
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        try await waitUntil("Chromium's DevToolsActivePort", timeout: .seconds(60)) {
            guard process.isRunning else { throw BrowserSocket.ProtocolError(description: "Chromium exited") }
            return (try? String(contentsOf: portFile, encoding: .utf8))?.split(separator: "\n").count == 2
        }
        let lines = try String(contentsOf: portFile, encoding: .utf8).split(separator: "\n")
        guard let port = Int(lines[0]) else { throw BrowserSocket.ProtocolError(description: "no DevTools port") }
        try await BrowserSocket.with(port: port, path: String(lines[1])) { socket in
            let chromium = Chromium(socket: socket, downloads: downloads, log: log)
            _ = try await chromium.serviceWorkerSession()
            try await body(chromium)
            _ = try? await socket.command("Browser.close")
        }
    }

    /// A session on the extension's service worker, once it has run its script (its listeners are then added).
    func serviceWorkerSession() async throws -> String {
        var worker: JSON = .null
        try await waitUntil("the extension's service worker", timeout: .seconds(60)) {
            let targets = try await socket.command("Target.getTargets")["targetInfos"].array
            worker = targets.first {
                $0["type"].string == "service_worker"
                    && $0["url"].string?.hasPrefix("chrome-extension://\(BrowserExtension.chromiumID)/") == true
            } ?? .null
            return !worker.isNull
        }
        let session = try await socket.command(
            "Target.attachToTarget", ["targetId": worker["targetId"], "flatten": true]
        )["sessionId"]
        guard let session = session.string else { throw BrowserSocket.ProtocolError(description: "no session") }
        try await evaluate("1", in: session)
        return session
    }

    /// Opens a tab at `url` and waits until the page at `expected` has loaded; returns the tab's session.
    func open(_ url: String, expecting expected: String) async throws -> String {
        let target = try await socket.command("Target.createTarget", ["url": "about:blank"])["targetId"]
        let session = try await socket.command("Target.attachToTarget", ["targetId": target, "flatten": true])
        guard let session = session["sessionId"].string else {
            throw BrowserSocket.ProtocolError(description: "no session for the tab")
        }
        try await socket.command("Page.enable", session: session)
        try await socket.command("Page.navigate", ["url": .string(url)], session: session)
        try await waitUntil("\(expected) to load", timeout: .seconds(30)) {
            try await evaluate("location.href + ' ' + document.readyState", in: session).string
                == "\(expected) complete"
        }
        return session
    }

    /// Clicks the element with id `id` as a user would: the mouse pressed and released on its middle.
    func click(_ id: String, in session: String) async throws {
        let middle = try await evaluate(
            "(r => [r.x + r.width / 2, r.y + r.height / 2])(document.getElementById('\(id)').getBoundingClientRect())",
            in: session
        )
        for type in ["mousePressed", "mouseReleased"] {
            try await socket.command(
                "Input.dispatchMouseEvent",
                ["type": .string(type), "x": middle[0], "y": middle[1], "button": "left", "clickCount": 1],
                session: session
            )
        }
    }

    /// The value of a JavaScript expression (awaited when it is a promise) in a page or worker session.
    @discardableResult
    func evaluate(_ expression: String, in session: String) async throws -> JSON {
        let result = try await socket.command(
            "Runtime.evaluate", ["expression": .string(expression), "awaitPromise": true, "returnByValue": true],
            session: session
        )
        if !result["exceptionDetails"].isNull {
            throw BrowserSocket.ProtocolError(description: "\(expression) threw: \(result["exceptionDetails"])")
        }
        return result["result"]["value"]
    }

    /// The states the page's downloads reached so far (`canceled`, `completed`), by the browser's download events.
    func downloadStates() -> [String] {
        socket.events("Page.downloadProgress").compactMap {
            let state = $0["params"]["state"].string
            return state == "inProgress" ? nil : state
        }
    }
}
