package import Foundation
import Synchronization

/// What a finished program printed and how it ended.
package struct CommandResult: Sendable {
    /// The exit status, or 128 + N when signal N ended it.
    package let status: Int32
    package let stdout: String
    /// Standard output as bytes, for a program whose output is not text.
    package let stdoutBytes: Data
    package let stderr: String
    /// What the process (not its children) consumed, as `wait4` reported it.
    package let usage: ResourceUsage
}

/// CPU time and peak memory of a finished process.
package struct ResourceUsage: Sendable {
    /// User plus system time.
    package let cpuTime: Duration
    /// The largest resident set size it reached.
    package let peakResidentBytes: Int
    /// Voluntary context switches: each one a wake-up (``ProcessSample/voluntarySwitches``).
    package let wakeups: Int
    /// Involuntary context switches: each one a preemption (``ProcessSample/involuntarySwitches``).
    package let preemptions: Int

    init(_ raw: rusage) {
        func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
        cpuTime = duration(raw.ru_utime) + duration(raw.ru_stime)
        peakResidentBytes = raw.ru_maxrss * 1024
        wakeups = raw.ru_nvcsw
        preemptions = raw.ru_nivcsw
    }
}

/// Runs external programs (`dbus-send`, `gdbus`, `busctl`, the built executables) from async tests.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, which lets children inherit its pipes
/// (an orphaned grandchild then holds other commands' output open) and the signal mask
/// of Dispatch's worker threads (the child would ignore SIGTERM). Waiting and reading happen on threads of
/// their own, never blocking the Swift concurrency pool.
package enum Command {
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) async throws -> CommandResult {
        await finish(try start(executable, arguments, environment: environment, input: input.map { Data($0.utf8) }))
    }

    /// Runs a program with `input` as its standard input, bytes that need not be text.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, bytes input: Data
    ) async throws -> CommandResult {
        await finish(try start(executable, arguments, environment: environment, input: input))
    }

    /// A started process and the read ends of its output pipes.
    package final class Running: Sendable {
        package let pid: pid_t
        let stdout: FileHandle
        let stderr: FileHandle
        private let ending = Mutex<(status: Int32, usage: ResourceUsage)?>(nil)

        init(pid: pid_t, stdout: FileHandle, stderr: FileHandle) {
            self.pid = pid
            self.stdout = stdout
            self.stderr = stderr
        }

        /// False once the process has exited (and been reaped).
        package var isRunning: Bool {
            ending.withLock { ending in
                if ending != nil { return false }
                var raw: Int32 = 0
                var usage = rusage()
                guard wait4(pid, &raw, WNOHANG, &usage) == pid else { return true }
                ending = (Running.decode(raw), ResourceUsage(usage))
                return false
            }
        }

        /// Sends SIGTERM, then SIGKILL should the process not have exited within `grace` seconds, and reaps it.
        /// Nothing when it has exited already.
        package func terminate(grace: Double = 5) {
            guard isRunning else { return }
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(grace)
            while isRunning && Date() < deadline { usleep(5_000) }
            if isRunning { kill(pid, SIGKILL) }
            _ = wait()
        }

        /// Blocks until the process exits.
        func wait() -> (status: Int32, usage: ResourceUsage) {
            if let ending = ending.withLock({ $0 }) { return ending }
            var raw: Int32 = 0
            var usage = rusage()
            while wait4(pid, &raw, 0, &usage) == -1 && errno == EINTR {}
            return ending.withLock { ending in
                if ending == nil { ending = (Running.decode(raw), ResourceUsage(usage)) }
                return ending ?? (-1, ResourceUsage(rusage()))
            }
        }

        static func decode(_ raw: Int32) -> Int32 {
            let signal = raw & 0x7f
            return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        }
    }

    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil
    ) throws -> Running {
        try start(executable, arguments, environment: environment, input: input.map { Data($0.utf8) })
    }

    /// Starts a program with `input` (if any) as its standard input, written in full and closed.
    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Data?
    ) throws -> Running {
        let path = executable.hasPrefix("/") ? executable : try which(executable)
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        var stdinPipe: [Int32] = [-1, -1]
        guard pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0, pipe(&stdinPipe) == 0 else {
            throw TestSupportError("pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec: the child gets only its own ends, as stdio (dup2 clears the flag there).
        for fd in stdoutPipe + stderrPipe + stdinPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input == nil {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let error = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        for fd in [stdoutPipe[1], stderrPipe[1], stdinPipe[0]] { close(fd) }
        guard error == 0 else {
            for fd in [stdoutPipe[0], stderrPipe[0], stdinPipe[1]] { close(fd) }
            throw TestSupportError("cannot run \(path): \(String(cString: strerror(error)))")
        }
        let stdinWriter = FileHandle(fileDescriptor: stdinPipe[1], closeOnDealloc: true)
        // From a thread of its own: input beyond the pipe's buffer blocks until the child reads it.
        if let input {
            Thread.detachNewThread {
                try? stdinWriter.write(contentsOf: input)
                try? stdinWriter.close()
            }
        } else {
            try? stdinWriter.close()
        }
        return Running(
            pid: pid,
            stdout: FileHandle(fileDescriptor: stdoutPipe[0], closeOnDealloc: true),
            stderr: FileHandle(fileDescriptor: stderrPipe[0], closeOnDealloc: true)
        )
    }

    /// Waits for exit and collects everything the process printed.
    ///
    /// The blocking reads and wait run on threads of their own, not on `DispatchQueue.global()`: on Linux that is
    /// the Swift concurrency pool (one thread per core), and blocking it starves the very tasks that must answer
    /// the process (an exported object replying to `dbus-send`) until Dispatch adds threads, seconds later.
    package static func finish(_ running: Running) async -> CommandResult {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let output = Mutex(Data())
                let reader = DispatchGroup()
                reader.enter()
                Thread.detachNewThread {
                    let data = running.stdout.readDataToEndOfFile()
                    output.withLock { $0 = data }
                    reader.leave()
                }
                let errors = running.stderr.readDataToEndOfFile()
                reader.wait()
                let (status, usage) = running.wait()
                continuation.resume(
                    returning: CommandResult(
                        status: status,
                        stdout: String(decoding: output.withLock { $0 }, as: UTF8.self),
                        stdoutBytes: output.withLock { $0 },
                        stderr: String(decoding: errors, as: UTF8.self),
                        usage: usage
                    )
                )
            }
        }
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
    package static func built(_ name: String) -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent(name).path
    }
}
