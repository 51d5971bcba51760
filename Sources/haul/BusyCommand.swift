import ArgumentParser
import DBusKit
import Foundation
import HaulContract

#if canImport(Glibc)
import Glibc
#endif

struct BusyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "busy",
        abstract: "Hold the network-activity indicator while a command runs.",
        discussion: """
            Exits with the command's status (128+N when a signal N ended it, 127 when it cannot be run). \
            The hold belongs to this process's bus connection: if haul busy is killed, hauld releases it.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The command and its arguments, after --.")
    var command: [String] = []

    private var commandLine: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func validate() throws {
        if commandLine.isEmpty { throw ValidationError("give the command to run, e.g. haul busy -- sleep 3") }
    }

    func run() async throws {
        var status: Int32 = 0
        try await reportingFailures {
            let client = try await HaulClient.connect()
            try await client.callIndicator(.incrementActivityCount)
            // Ctrl-C reaches the whole process group: the command decides what it means; we wait for it.
            signal(SIGINT, SIG_IGN)
            signal(SIGQUIT, SIG_IGN)
            status = await Self.runToCompletion(commandLine)
            try? await client.callIndicator(.decrementActivityCount)
            await client.connection.close()
        }
        throw ExitCode(status)
    }

    /// Spawns the command with this terminal's stdio and default signal handling. The wait blocks a thread of
    /// its own: on Linux, Dispatch's global queues are the Swift concurrency pool.
    static func runToCompletion(_ arguments: [String]) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: spawnAndWait(arguments))
            }
        }
    }

    private static func spawnAndWait(_ arguments: [String]) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let error = posix_spawnp(&pid, arguments[0], nil, &attributes, argv, environ)
        guard error == 0 else {
            FileHandle.standardError.write(Data("haul: cannot run \(arguments[0]): \(String(cString: strerror(error)))\n".utf8))
            return 127
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signalled = status & 0x7f
        return signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
    }
}
