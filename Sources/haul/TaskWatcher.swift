import DBusKit
import Foundation

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

    /// Returns the tasks' final states once all of the given (or all running) tasks have completed.
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
                if owner.isEmpty {
                    FileHandle.standardError.write(Data("haul: hauld left the bus; waiting for it to come back\n".utf8))
                    continue
                }
                // A restarted hauld restored the tasks, maybe finishing some before it took the name.
                for watchedPath in Array(watched.keys) {
                    watched[watchedPath] = (try? await client.task(watchedPath)) ?? watched[watchedPath]
                }
                render(force: true)
            } else if message.member == "TaskDidComplete" {
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
        return Array(watched.values)
    }
}
