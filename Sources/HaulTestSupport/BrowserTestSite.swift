package import Foundation

/// The loopback web site of the browser hand-off tests, `scripts/browser-test-site.py`: a login that sets a
/// session cookie, a page linking to a file that needs that cookie and the page as referrer, served under a name
/// of its own (`Content-Disposition`), and a `blob:` link. See the script's header.
package final class BrowserTestSite: Sendable {
    package let port: Int
    /// The value of the session cookie `/login` sets.
    package let secret: String
    private let process: Command.Running

    /// Serves the file `root/<name>` (the folder's only file) behind the login, at `rate` bytes per second if
    /// given; waits, off the concurrency pool, until the site listens.
    package init(root: URL, secret: String, rate: Int? = nil) async throws {
        self.secret = secret
        let script = URL(fileURLWithPath: TestHTTPServer.scriptPath).deletingLastPathComponent()
            .appendingPathComponent("browser-test-site.py").path
        let pacing = rate.map { ["--rate", String($0)] } ?? []
        process = try Command.start(
            try TestHTTPServer.python(), [script, "--root", root.path, "--secret", secret] + pacing
        )
        let line = try await process.firstLine(timeout: 30, of: "browser-test-site.py")
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            let errors = process.abandon()
            throw TestSupportError("browser-test-site.py printed \(line.debugDescription) instead of its port\(errors)")
        }
        self.port = port
        let stdout = process.stdout
        let stderr = process.stderr
        Thread.detachNewThread { _ = stdout.readDataToEndOfFile() }
        Thread.detachNewThread { _ = stderr.readDataToEndOfFile() }
    }

    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The name the site gives `/files/<name>` in its `Content-Disposition`.
    package static func servedName(_ name: String) -> String { "Report " + name }

    /// What a click on the page's `blob:` link saves (as `notes.txt`).
    package static let blobText = "made in the page, never on a server\n"

    /// One request of `/files/`, in arrival order.
    package struct FileRequest: Sendable, Decodable, Equatable {
        package let path: String
        package let status: Int
        /// Whether the session cookie came with it.
        package let cookie: Bool
        package let referer: String
        package let userAgent: String
        /// Body bytes sent.
        package let bytes: Int

        enum CodingKeys: String, CodingKey {
            case path, status, cookie, referer, bytes
            case userAgent = "user_agent"
        }
    }

    package func fileRequests() async throws -> [FileRequest] {
        let result = try await Command.run("curl", ["-s", "-S", "--noproxy", "*", "--fail", url("/requests")])
        guard result.status == 0 else { throw TestSupportError("GET /requests failed: \(result.stderr)") }
        return try JSONDecoder().decode([FileRequest].self, from: Data(result.stdout.utf8))
    }

    package func stop() {
        if process.isRunning {
            kill(process.pid, SIGTERM)
            _ = process.wait()
        }
    }

    deinit { stop() }
}
