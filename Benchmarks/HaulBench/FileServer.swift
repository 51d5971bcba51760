import Foundation
import HaulTestSupport

/// A loopback HTTP server for the bench's files, with ETag and Range support (hauld's Resume needs them).
protocol FileServer: Sendable {
    /// What served the files, for the report (`nginx/1.22.1`).
    var name: String { get }
    /// The URL of a file in the workspace's `www/`; `throttled` paces each response at `throttleRate`.
    func url(_ file: String, throttled: Bool) -> String
    /// The URL of a file served at most `connectionCap` bytes per second per connection, as many servers and CDNs
    /// cap them (what segmented downloads are for).
    func cappedURL(_ file: String) -> String
    func stop()
}

/// The bytes per second of a throttled response: slow enough that transfers stay in flight while the control
/// latency is measured, fast enough to keep hauld busy.
let throttleRate = 2 << 20

/// The per-connection cap of the segmented phase: nginx's `limit_rate 10m`.
let connectionCap = 10 << 20

/// The test suite's Python server, when nginx is not installed: slower, but the same for hauld and curl.
struct PythonFileServer: FileServer {
    private let server: TestHTTPServer

    init(root: URL) async throws {
        server = try await TestHTTPServer(root: root)
    }

    var name: String { "test-http-server" }

    func url(_ file: String, throttled: Bool) -> String {
        server.url("/files/\(file)" + (throttled ? "?throttle=\(throttleRate)" : ""))
    }

    func cappedURL(_ file: String) -> String {
        server.url("/files/\(file)?throttle=\(connectionCap)")
    }

    func stop() { server.stop() }
}
