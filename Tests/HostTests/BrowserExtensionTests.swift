import Foundation
import HaulTestSupport
import Testing

/// The extension's own logic and identity, without a browser: policy.js under gjs, and the ids that tie the
/// extension to the host's manifests.
@Suite(.timeLimit(.minutes(2))) struct BrowserExtensionTests {
    /// `integrations/browser/tests/policy.test.js`: each of its tests prints "ok NAME" or "not ok NAME: why".
    @Test func thePolicyHoldsUnderGjs() async throws {
        let script = BrowserExtension.repository.appendingPathComponent("integrations/browser/tests/policy.test.js")
        let result = try await Command.run("/usr/bin/gjs", ["-m", script.path])
        let lines = result.stdout.split(separator: "\n")
        for failure in lines where failure.hasPrefix("not ok") { Issue.record("policy.test.js: \(failure)") }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count >= 15, "\(result.stdout)")
    }

    /// Chromium derives an extension's id from the `key` in its manifest: the first 32 hex digits of the SHA-256
    /// of the public key (DER), written with the letters a to p. The host's manifest must allow that id.
    @Test func chromiumsIdComesFromTheManifestsKey() async throws {
        let key = try #require(try BrowserExtension.manifest()["key"].string)
        let der = try #require(Data(base64Encoded: key))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("haul-key-\(UUID()).der")
        defer { try? FileManager.default.removeItem(at: file) }
        try der.write(to: file)
        let digest = try await Command.run("sha256sum", [file.path]).stdout.prefix(32)
        let letters = Array("abcdefghijklmnop")
        let id = String(digest.compactMap { $0.hexDigitValue.map { letters[$0] } })
        #expect(id.count == 32)
        #expect(BrowserExtension.chromiumID == id)
        let origins = try BrowserExtension.repositoryManifest(.chromium)["allowed_origins"]
        #expect(origins == [.string("chrome-extension://\(id)/")])
    }

    @Test func firefoxsIdIsTheManifestsGeckoId() throws {
        let id = try #require(try BrowserExtension.manifest()["browser_specific_settings"]["gecko"]["id"].string)
        #expect(try BrowserExtension.repositoryManifest(.firefox)["allowed_extensions"] == [.string(id)])
    }

    /// The host's name, as the extension asks for it and as the manifests give it; `make install` rewrites the path.
    @Test func theManifestsNameTheHostTheExtensionAsksFor() throws {
        let policy = try String(
            contentsOf: BrowserExtension.directory.appendingPathComponent("policy.js"), encoding: .utf8
        )
        for browser in [BrowserExtension.Browser.chromium, .firefox] {
            let manifest = try BrowserExtension.repositoryManifest(browser)
            let name = try #require(manifest["name"].string)
            #expect(policy.contains("export const HOST_NAME = '\(name)';"))
            #expect(manifest["type"] == "stdio")
            #expect(manifest["path"] == "/usr/local/libexec/haul/haul-browser-host")
        }
    }
}
