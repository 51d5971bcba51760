import AsyncHTTPClient
import Foundation
import HaulTestSupport
import NIOCore

/// nginx (Debian's package) as the current user: its own configuration, logs and pid file in the workspace,
/// in the foreground (`daemon off`), listening on 127.0.0.1 only.
final class NginxServer: FileServer {
    static let executable = "/usr/sbin/nginx"

    let name: String
    private let port: Int
    private let process: Command.Running

    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    init(root: URL, workDirectory: URL) async throws {
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        let version = try await Command.run(Self.executable, ["-v"])
        name =
            version.stderr.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
            ?? "nginx"
        port = try FreePort.loopback()
        let config = workDirectory.appendingPathComponent("nginx.conf")
        try Self.configuration(root: root, workDirectory: workDirectory, port: port)
            .write(to: config, atomically: true, encoding: .utf8)
        let errorLog = workDirectory.appendingPathComponent("error.log").path
        process = try Command.start(
            Self.executable, ["-p", workDirectory.path, "-c", config.path, "-e", errorLog]
        )
        let deadline = ContinuousClock.now + .seconds(10)
        while !FreePort.accepts(port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                stop()
                let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
                throw TestSupportError("nginx did not start: \(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func url(_ file: String, throttled: Bool) -> String {
        "http://127.0.0.1:\(port)/\(throttled ? "slow/" : "")\(file)"
    }

    func cappedURL(_ file: String) -> String {
        "http://127.0.0.1:\(port)/capped/\(file)"
    }

    /// Polls nginx's `stub_status` every 20 ms over one kept-alive connection: its "Active connections" are every
    /// client connection it holds, this poll's own among them.
    func mostConnectionsAtOnce() async throws -> Int {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(Self.statusPath)")
        var most = 0
        var failure: (any Error)?
        while !Task.isCancelled {
            do {
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = String(buffer: try await response.body.collect(upTo: 4096))
                guard let active = Self.activeConnections(in: body) else {
                    throw TestSupportError("nginx's status answered \(response.status): \(body)")
                }
                most = max(most, active - 1)
            } catch where Task.isCancelled {
                break
            } catch {
                failure = error
                break
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        try await client.shutdown()
        if let failure { throw failure }
        return most
    }

    private static let statusPath = "/haul-bench-nginx-status"

    /// The count of `Active connections: 3 ` (the first line of `stub_status`'s page).
    private static func activeConnections(in page: String) -> Int? {
        let prefix = "Active connections:"
        guard let line = page.split(separator: "\n").first, line.hasPrefix(prefix) else { return nil }
        return Int(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces))
    }

    /// Fast shutdown (SIGTERM), then SIGKILL after 5 s.
    func stop() {
        guard process.isRunning else { return }
        kill(process.pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(process.pid, SIGKILL) }
        while process.isRunning { usleep(10_000) }
    }

    private static func configuration(root: URL, workDirectory: URL, port: Int) -> String {
        let work = workDirectory.path
        // As root, nginx would hand its workers to `nobody`; keep them as the user who runs the bench.
        let user = geteuid() == 0 ? "user root root;" : ""
        return """
            \(user)
            daemon off;
            worker_processes 1;
            pid \(work)/nginx.pid;
            error_log \(work)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                sendfile on;
                tcp_nopush on;
                default_type application/octet-stream;
                client_body_temp_path \(work)/client_body;
                proxy_temp_path \(work)/proxy;
                fastcgi_temp_path \(work)/fastcgi;
                uwsgi_temp_path \(work)/uwsgi;
                scgi_temp_path \(work)/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                    location = \(statusPath) {
                        stub_status;
                    }
                    location /slow/ {
                        alias \(root.path)/;
                        limit_rate \(throttleRate);
                    }
                    location /capped/ {
                        alias \(root.path)/;
                        limit_rate \(connectionCap);
                    }
                }
            }
            """
    }
}
