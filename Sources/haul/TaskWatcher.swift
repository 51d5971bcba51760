import DBusKit
import Foundation
import HaulContract

#if canImport(Glibc)
import Glibc
#endif

/// Shows tasks' progress until they complete: a redrawn bar per task on a terminal, a plain line per second
/// and per state change otherwise. Bound to the tasks it is given, or to every running task.
struct TaskWatcher {
    let client: HaulClient
    let json: Bool
    private let isTerminal = isatty(STDOUT_FILENO) == 1

    init(client: HaulClient, json: Bool = false) {
        self.client = client
        self.json = json
    }

    /// Returns the tasks' final states once all of the given (or all running) tasks have completed. Throws
    /// ``CLIFailure/unreachable(_:)`` when hauld leaves the bus meanwhile, or haul's own connection to it is lost.
    func watch(_ paths: [ObjectPath]?) async throws -> [TaskInfo] {
        let changes = try await client.taskChanges()
        var watched: [ObjectPath: TaskInfo] = [:]
        if let paths {
            for path in paths { watched[path] = try await client.task(path) }
        } else {
            for info in try await client.tasks() where !info.isCompleted { watched[info.path] = info }
        }
        var drawn = 0
        var lastPlain = Date.distantPast
        var spinner = 0
        let spinners: [Character] = ["|", "/", "-", "\\"]
        func render(force: Bool) {
            let ordered = watched.values.sorted { $0.id < $1.id }
            if json {
                for info in ordered { emit(jsonLine(info.json)) }
                return
            }
            if isTerminal {
                // Move up over the previous frame, then redraw each line in place, in one write.
                var frame = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                spinner += 1
                for info in ordered {
                    frame += "\u{1B}[2K" + info.progressLine(spinner: spinners[spinner % spinners.count]) + "\n"
                }
                drawn = ordered.count
                FileHandle.standardOutput.write(Data(frame.utf8))
            } else if force || Date().timeIntervalSince(lastPlain) >= 1 {
                lastPlain = Date()
                for info in ordered { emit(info.progressLine(spinner: " ")) }
            }
        }
        render(force: true)
        if watched.values.allSatisfy(\.isCompleted) { return Array(watched.values) }
        for await message in changes {
            guard let path = message.path else { continue }
            if message.member == "NameOwnerChanged" {
                let owner = message.body.count == 3 ? message.body[2].stringValue ?? "" : ""
                // Stopped or crashed: waiting would last until someone starts it again, maybe forever.
                if owner.isEmpty {
                    throw CLIFailure.unreachable(Self.hauldLeft(following: watched.values.filter { !$0.isCompleted }))
                }
                // hauld took the name (D-Bus activated it for our first call, say). It restored the tasks, maybe
                // finishing some before it took the name: read them again.
                for watchedPath in Array(watched.keys) {
                    watched[watchedPath] = (try? await client.task(watchedPath)) ?? watched[watchedPath]
                }
                render(force: true)
            } else if message.member == ManagerSignal.taskDidComplete.rawValue {
                guard let completed = message.body.first?.objectPathValue, watched[completed] != nil else { continue }
                watched[completed] = (try? await client.task(completed)) ?? watched[completed]
                render(force: true)
            } else if watched[path] != nil, message.body.count == 3, let changed = message.body[1].stringDictionary {
                let before = watched[path]?.state
                watched[path]?.apply(changed)
                render(force: watched[path]?.state != before)
            }
            if watched.values.allSatisfy(\.isCompleted) { break }
        }
        let unfinished = watched.values.filter { !$0.isCompleted }
        // The stream ends early only when the connection to the bus is lost.
        if !unfinished.isEmpty { throw CLIFailure.unreachable(Self.busLost(following: unfinished)) }
        return Array(watched.values)
    }

    /// What haul says when hauld leaves the bus. Tasks are saved on every state change and a stopped (even killed)
    /// hauld restores them when it starts again, which a call such as `haul watch` does where D-Bus activates it.
    static func hauldLeft(following tasks: [TaskInfo]) -> String {
        "hauld left the bus while following \(saved(tasks))"
    }

    static func busLost(following tasks: [TaskInfo]) -> String {
        "the connection to the session bus was lost while following \(saved(tasks))"
    }

    /// `task 3; the task is saved …` or `tasks 3, 4; they are saved …`.
    private static func saved(_ tasks: [TaskInfo]) -> String {
        let ids = tasks.map(\.id).sorted()
        guard ids.count != 1 else {
            return "task \(ids[0]); the task is saved and goes on when hauld is back: `haul watch \(ids[0])` follows "
                + "it again."
        }
        return "tasks \(ids.map(String.init).joined(separator: ", ")); they are saved and go on when hauld is back: "
            + "`haul watch` follows them again."
    }
}
