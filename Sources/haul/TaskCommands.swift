import ArgumentParser
import DBusKit
import Foundation
import HaulContract

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List transfers.",
        discussion: """
            A finished transfer shows as completed, failed (with its error, cut to one line) or cancelled. With \
            --json, "state" is the task's State on the bus (completed for all three) and "outcome" is succeeded, \
            failed or cancelled (empty while the transfer is unfinished).
            """
    )

    @Flag(help: "One JSON object per task, one per line.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let tasks = try await client.tasks().sorted { $0.id < $1.id }
            // One write for the whole list.
            if json {
                if !tasks.isEmpty { emit(tasks.map { jsonLine($0.json) }.joined(separator: "\n")) }
            } else if tasks.isEmpty {
                emit("no transfers")
            } else {
                emit(tasks.map(\.row).joined(separator: "\n"))
            }
        }
    }
}

/// The task numbers a control command acts on.
struct TaskSelection: ParsableArguments {
    @Argument(help: "Task numbers, as `haul ls` shows them.")
    var ids: [UInt32] = []

    @Flag(help: "Every task.")
    var all = false

    func validate() throws {
        if ids.isEmpty == !all { throw ValidationError("give task numbers or --all, not both") }
    }
}

/// `suspend`, `resume`, `cancel`: one Task method on each selected task, or the Manager's *All method.
protocol TaskControlCommand: AsyncParsableCommand {
    static var method: TaskMethod { get }
    /// The Manager method that applies `method` to every task.
    static var methodForAll: ManagerMethod { get }
    var selection: TaskSelection { get }
}

extension TaskControlCommand {
    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            if selection.all {
                _ = try await client.callManager(Self.methodForAll)
                return
            }
            try await client.callEachTask(selection.ids, Self.method)
        }
    }
}

extension HaulClient {
    /// Calls `method` on each task of `ids`, going on past a task that refuses; fails with every refusal at the end.
    func callEachTask(_ ids: [UInt32], _ method: TaskMethod) async throws {
        var failures: [String] = []
        for id in ids {
            do {
                try await callTask(HaulBus.taskPath(id), method)
            } catch let failure as CLIFailure {
                if case .unreachable = failure { throw failure }
                failures.append("task \(id): \(failure)")
            }
        }
        if !failures.isEmpty { throw CLIFailure.refused(failures.joined(separator: "\nhaul: ")) }
    }
}

struct SuspendCommand: TaskControlCommand {
    static let configuration = CommandConfiguration(commandName: "suspend", abstract: "Pause transfers.")
    static let method = TaskMethod.suspend
    static let methodForAll = ManagerMethod.suspendAll
    @OptionGroup var selection: TaskSelection
}

struct ResumeCommand: TaskControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Continue transfers from the bytes on disk."
    )
    static let method = TaskMethod.resume
    static let methodForAll = ManagerMethod.resumeAll
    @OptionGroup var selection: TaskSelection
}

struct CancelCommand: TaskControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Stop transfers and remove their partial files."
    )
    static let method = TaskMethod.cancel
    static let methodForAll = ManagerMethod.cancelAll
    @OptionGroup var selection: TaskSelection
}

struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Run failed transfers again (an unfinished one resumes)."
    )

    @Argument(help: "Task numbers.")
    var ids: [UInt32] = []

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give task numbers") }
    }

    func run() async throws {
        try await reportingFailures {
            try await HaulClient.connect().callEachTask(ids, .retry)
        }
    }
}

struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Remove completed transfers from the list."
    )

    @Argument(help: "Task numbers.")
    var ids: [UInt32] = []

    @Flag(help: "Every completed task.")
    var completed = false

    func validate() throws {
        if ids.isEmpty == !completed { throw ValidationError("give task numbers or --completed, not both") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let paths = completed
                ? try await client.tasks().filter(\.isCompleted).map(\.path) : ids.map(HaulBus.taskPath)
            for path in paths { try await client.callTask(path, .forget) }
        }
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow one task, or every running task, until completion (Ctrl-C stops watching).",
        discussion: """
            With one task, exits 0 when it succeeded, 1 when it failed, 2 when it was cancelled and 69 when hauld \
            left the bus meanwhile.
            """
    )

    @Argument(help: "A task number (default: every running task).")
    var id: UInt32?

    @Flag(help: "Print each update as one JSON object per line.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let watcher = TaskWatcher(client: client, json: json)
            let paths = id.map { [HaulBus.taskPath($0)] }
            switch try await Interruption.trap().detachable({ try await watcher.watch(paths) }) {
            case .detached:
                throw ExitCode(130)
            case .finished(let tasks):
                if id != nil, let task = tasks.first { try task.throwUnlessSucceeded() }
            }
        }
    }
}
