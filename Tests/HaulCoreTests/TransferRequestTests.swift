import Foundation
import HaulCore
import Testing

@Suite struct TransferRequestTests {
    @Test(arguments: ["http://example.test/a", "https://example.test:8443/x?y=1", "HTTP://EXAMPLE.test/"])
    func acceptsHTTPAndHTTPS(_ url: String) throws {
        #expect(try TransferURL(url).url.host != nil)
    }

    @Test(arguments: [("ftp://example.test/a", "ftp"), ("file:///etc/passwd", "file"), ("gopher://x/", "gopher")])
    func refusesOtherSchemes(_ url: String, _ scheme: String) {
        #expect(throws: TransferRequestError.unsupportedScheme(scheme)) { try TransferURL(url) }
    }

    @Test(arguments: ["", "   ", "no-scheme", "http://", "http:///path", "://x"])
    func refusesMalformedURLs(_ url: String) {
        #expect(throws: TransferRequestError.self) { try TransferURL(url) }
        #expect((try? TransferURL(url)) == nil)
    }

    /// A port a socket cannot use once reached a trapping conversion inside the HTTP stack.
    @Test(arguments: [
        "http://127.0.0.1:65536/", "http://127.0.0.1:99999/", "http://127.0.0.1:4294967296/",
        "https://127.0.0.1:99999/", "http://[::1]:70000/", "http://127.0.0.1:0/",
        "http://127.0.0.1:18446744073709551616/",
    ])
    func refusesPortsOutOfRange(_ url: String) {
        #expect(throws: TransferRequestError.self) { try TransferURL(url) }
    }

    @Test(arguments: ["http://127.0.0.1:1/", "http://127.0.0.1:65535/", "http://[::1]:8080/x"])
    func acceptsEveryUsablePort(_ url: String) throws {
        #expect(try TransferURL(url).url.port != nil)
    }

    @Test func urlsLongerThanARequestLineAreRefused() throws {
        let path = String(repeating: "a", count: TransferURL.maximumLength)
        #expect(throws: TransferRequestError.self) { try TransferURL("http://example.test/" + path) }
        #expect(try TransferURL("http://example.test/" + path.dropFirst(100)).url.host != nil)
    }

    @Test func redactionHidesPasswordsOfAnyString() {
        #expect(TransferURL.redacted("http://bob:pw@host:99999/x") == "http://bob@host:99999/x")
        #expect(!TransferURL.redacted("ftp://bob:pw@[bad/x").contains("pw"))
        #expect(TransferURL.redacted("http://host/a@b") == "http://host/a@b")
    }

    @Test func descriptionHidesThePassword() throws {
        #expect(try TransferURL("https://alice:s3cret@example.test/f").description == "https://alice@example.test/f")
        #expect(try TransferURL("https://example.test/f").description == "https://example.test/f")
    }

    @Test func pathsMustBeAbsoluteFiles() throws {
        #expect(try LocalPath("/tmp/a/../b").path == "/tmp/b")
        #expect(try LocalPath("/tmp//a/./b").path == "/tmp/a/b")
        #expect(try LocalPath("/../../etc/x").path == "/etc/x")
        #expect(try LocalPath("/tmp/a/b").folder == "/tmp/a")
        #expect(try LocalPath("/x").folder == "/")
        #expect(throws: TransferRequestError.self) { try LocalPath("relative/file") }
        #expect(throws: TransferRequestError.self) { try LocalPath("/tmp/dir/") }
    }

    @Test func existingFoldersAreResolvedAsTheKernelWould() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("localpath-\(UUID())")
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: base.appendingPathComponent("real/sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: base.appendingPathComponent("dl").path, withDestinationPath: base.appendingPathComponent("real/sub").path
        )
        let root = try #require(realpath(base.path, nil).map { String(cString: $0) })
        // dl/.. is real, not base: the kernel follows dl first.
        #expect(try LocalPath(base.path + "/dl/../x.bin").path == root + "/real/x.bin")
        #expect(try LocalPath(base.path + "/dl/new.bin").path == root + "/real/sub/new.bin")
        // Nothing exists below base/missing: resolved by the text alone.
        #expect(try LocalPath(base.path + "/missing/../y.bin").path == base.path + "/y.bin")
    }

    @Test func checksumsAndHeadersAreValidated() throws {
        let hex = String(repeating: "aB", count: 32)
        #expect(try DownloadOptions.validatedSHA256(hex) == hex.lowercased())
        #expect(throws: TransferRequestError.self) { try DownloadOptions.validatedSHA256("abc") }
        #expect(throws: TransferRequestError.self) { try DownloadOptions.validatedSHA256(String(repeating: "g", count: 64)) }
        #expect(try DownloadOptions.validatedHeaders(["X-Token": "v"]) == ["X-Token": "v"])
        #expect(throws: TransferRequestError.self) { try DownloadOptions.validatedHeaders(["Bad Name": "v"]) }
        #expect(throws: TransferRequestError.self) { try DownloadOptions.validatedHeaders(["X": "a\r\nInjected: 1"]) }
    }
}
