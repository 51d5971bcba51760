package import Foundation

/// A command whose stdout goes to a file, so that a test can wait for what it has printed while it runs (its
/// first line says it is subscribed, for instance) instead of sleeping and hoping.
package struct CommandWithOutputFile {
    package let running: Command.Running
    package let output: URL

    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], output: URL
    ) throws -> CommandWithOutputFile {
        let running = try Command.start(
            "/bin/sh", ["-c", #"out=$1; shift; exec "$@" > "$out""#, "sh", output.path, executable] + arguments,
            environment: environment
        )
        return CommandWithOutputFile(running: running, output: output)
    }

    package var lines: [Substring] {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// Waits until at least `count` lines were printed; throws if the command ended or `timeout` passed first.
    package func waitForLines(_ count: Int, timeout: Duration = .seconds(20)) async throws {
        try await waitForOutput("\(count) lines", timeout: timeout) { $0.count >= count }
    }

    /// Waits until the command exits; one still running after `timeout` is killed (SIGKILL), so that a command that
    /// would hang fails its test at once instead of at the suite's time limit.
    package func finish(within timeout: Duration = .seconds(20)) async -> CommandResult {
        try? await waitUntil("the command to exit", timeout: timeout) { !running.isRunning }
        if running.isRunning { kill(running.pid, SIGKILL) }
        return await Command.finish(running)
    }

    /// Waits until the lines printed so far satisfy `condition` (`what` says what they should show); throws if the
    /// command ended or `timeout` passed first.
    package func waitForOutput(
        _ what: String, timeout: Duration = .seconds(20), _ condition: ([Substring]) -> Bool
    ) async throws {
        try await waitUntil("\(what) from \(output.lastPathComponent)", timeout: timeout, seen: { "\(lines)" }) {
            if condition(lines) { return true }
            guard running.isRunning else { throw TestSupportError("the command exited; it printed \(lines)") }
            return false
        }
    }
}
