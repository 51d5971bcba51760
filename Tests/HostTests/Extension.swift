import Foundation
import HaulTestSupport

/// The browser extension of this repository (`integrations/browser/`) and the host this package builds.
enum Extension {
    enum Browser: String {
        case chromium, firefox
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The folder a user adds to the browser (installed as /usr/share/haul/browser-extension).
    static let directory = repository.appendingPathComponent("integrations/browser/extension")

    /// The repository's host manifest for `browser` (as `make install` installs it).
    static func repositoryManifest(_ browser: Browser) throws -> JSON {
        let file = repository.appendingPathComponent("integrations/browser/native-messaging/\(browser.rawValue).json")
        return try JSON(parsing: Data(contentsOf: file))
    }

    /// The extension's manifest.json.
    static func manifest() throws -> JSON {
        try JSON(parsing: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
    }

    /// Chromium's id of the extension, as the host manifest allows it (`chrome-extension://ID/`).
    static var chromiumID: String {
        let origin = (try? repositoryManifest(.chromium)["allowed_origins"][0].string) ?? ""
        return String(origin.dropFirst("chrome-extension://".count).dropLast())
    }

    /// The repository's manifest for `browser`, naming the host built by this package.
    static func hostManifest(_ browser: Browser) throws -> Data {
        guard case .object(var members) = try repositoryManifest(browser) else {
            throw TestSupportError("the \(browser) host manifest is not a JSON object")
        }
        members["path"] = .string(Command.built("haul-browser-host"))
        return JSON.object(members).data
    }
}

/// Starting and ending a browser process.
enum Browsers {
    /// Starts `executable` with its output going to `log`: a browser writes much there, and a pipe nobody reads
    /// would stall it. (sh execs the browser, so the process id is the browser's.)
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], log: URL
    ) throws -> Command.Running {
        var environment = environment
        environment["HAUL_BROWSER_LOG"] = log.path
        return try Command.start(
            "/bin/sh", ["-c", #"exec "$0" "$@" >"$HAUL_BROWSER_LOG" 2>&1"#, executable] + arguments,
            environment: environment
        )
    }

    /// Waits for a browser asked to close to exit, and kills it when it has not within 20 s.
    static func end(_ process: Command.Running) async {
        try? await waitUntil("the browser to exit", timeout: .seconds(20)) { !process.isRunning }
        if process.isRunning { kill(process.pid, SIGKILL) }
        _ = await Command.finish(process)
    }
}
