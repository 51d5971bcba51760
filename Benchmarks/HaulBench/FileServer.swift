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
    /// Follows the connections at the server until the calling task is cancelled, and returns the most it held at
    /// once: each is a transfer hauld has going (a suspended or cancelled attempt closes its connection). Counted by
    /// the server itself: the kernel's socket tables (`/proc/net/tcp`, `ss`) are walked bucket by bucket, 4 to 9 ms
    /// a sample on a 2-core machine, which sampled every 20 ms took a third of a core from the hauld being watched.
    func mostConnectionsAtOnce() async throws -> Int
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

    /// The server's own count, `most_in_flight` of its statistics, exact at every moment.
    func mostConnectionsAtOnce() async throws -> Int {
        try await server.resetStats()
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
        // A task of its own: the calling one is cancelled, and the statistics are asked for with curl.
        let server = server
        return try await Task { try await server.stats().mostInFlight }.value
    }

    func stop() { server.stop() }
}
