import Foundation
import HaulTestSupport

/// The browser extension of this repository (`integrations/browser/`) and the host this package builds.
enum BrowserExtension {
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
