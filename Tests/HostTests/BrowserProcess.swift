import Foundation
import HaulTestSupport

/// Starting and ending a browser process.
enum BrowserProcess {
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

    /// Runs `body` with the started browser `process`, then ends it (``end(_:)``), however `body` ends.
    static func whileRunning(_ process: Command.Running, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await end(process)
            throw error
        }
        await end(process)
    }

    /// Waits for a browser asked to close to exit, and kills it when it has not within 20 s.
    static func end(_ process: Command.Running) async {
        try? await waitUntil("the browser to exit", timeout: .seconds(20)) { !process.isRunning }
        if process.isRunning { kill(process.pid, SIGKILL) }
        _ = await Command.finish(process)
    }
}
