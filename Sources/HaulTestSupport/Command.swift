public import Foundation

/// Runs external programs (`dbus-send`, `gdbus`, `busctl`, the built executables) from async tests without
/// blocking the Swift concurrency pool: waiting and reading happen on Dispatch threads.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

public enum Command {
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) async throws -> CommandResult {
        let process = try start(executable, arguments, environment: environment, input: input)
        return await finish(process)
    }

    /// A started process with its output pipes.
    public final class Running: Sendable {
        public let process: Process
        let stdout: Pipe
        let stderr: Pipe

        init(process: Process, stdout: Pipe, stderr: Pipe) {
            self.process = process
            self.stdout = stdout
            self.stderr = stderr
        }

        public var pid: Int32 { process.processIdentifier }
    }

    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : try which(executable))
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try runWithDefaultSignalMask(process)
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        return Running(process: process, stdout: stdout, stderr: stderr)
    }

    /// Waits for exit and collects everything the process printed.
    public static func finish(_ running: Running) async -> CommandResult {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let group = DispatchGroup()
                // Written by one block and read after group.wait(), which orders the two.
                nonisolated(unsafe) var out = Data()
                var err = Data()
                DispatchQueue.global().async(group: group) {
                    out = running.stdout.fileHandleForReading.readDataToEndOfFile()
                }
                err = running.stderr.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                running.process.waitUntilExit()
                continuation.resume(
                    returning: CommandResult(
                        status: running.process.terminationStatus,
                        stdout: String(decoding: out, as: UTF8.self),
                        stderr: String(decoding: err, as: UTF8.self)
                    )
                )
            }
        }
    }

    /// Dispatch's worker threads block signals and a spawned child inherits the mask: without this, a child
    /// started from a test would ignore SIGTERM.
    static func runWithDefaultSignalMask(_ process: Process) throws {
        var empty = sigset_t()
        var saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }

    static func which(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError("\(name) is not installed")
    }

    /// An executable built by this package, found beside the running test bundle.
    public static func built(_ name: String) -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent(name).path
    }
}
