import Foundation
import HaulTestSupport

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
