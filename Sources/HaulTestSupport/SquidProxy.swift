package import Foundation

/// Debian's stock squid as a forward proxy on 127.0.0.1, with its own configuration in a temporary folder and
/// the stock rule that matters to clients: `CONNECT` only to port 443 (`http_access deny CONNECT !SSL_ports`).
package final class SquidProxy: Sendable {
    package static let executable = "/usr/sbin/squid"

    package let port: Int
    package let directory: URL
    private let process: Command.Running

    /// `127.0.0.1:<port>`, as a proxy variable names it.
    package var authority: String { "127.0.0.1:\(port)" }

    /// Starts squid in the foreground and waits until it accepts connections.
    package init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-squid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // As root, squid works as the `proxy` user: its logs must be writable for it.
        chmod(directory.path, 0o777)
        port = try FreePort.loopback()
        let path = directory.path
        let configuration = """
            http_port 127.0.0.1:\(port)
            pid_filename \(path)/squid.pid
            cache_log \(path)/cache.log
            access_log stdio:\(path)/access.log
            coredump_dir \(path)
            cache deny all
            cache_mem 8 MB
            shutdown_lifetime 0 seconds
            acl SSL_ports port 443
            acl CONNECT method CONNECT
            http_access deny CONNECT !SSL_ports
            http_access allow localhost
            http_access deny all
            \(geteuid() == 0 ? "cache_effective_user proxy" : "")
            """
        let file = directory.appendingPathComponent("squid.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process = try Command.start(Self.executable, ["-N", "-f", file.path])
        do {
            try await waitUntil("squid to listen on port \(port)", timeout: .seconds(20), every: .milliseconds(50)) {
                [process, port] in
                guard process.isRunning else { throw TestSupportError("squid exited") }
                return FreePort.accepts(port)
            }
        } catch {
            stop()
            let log = (try? String(contentsOf: directory.appendingPathComponent("cache.log"), encoding: .utf8))
            throw TestSupportError("squid did not start (\(error)): \(log ?? "no cache.log")")
        }
    }

    /// The requests squid logged: `TCP_MISS/200 … GET http://…`, `TCP_DENIED/403 … CONNECT host:port`, one a line.
    package var accessLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
    }

    /// Stops squid (SIGTERM, then SIGKILL after 5 s) and removes its folder. Idempotent.
    package func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
