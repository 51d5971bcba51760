public import DBusKit

/// Which task has which KDE job view, as a pure state machine: events from the bus (a task changed or went
/// away, the job view server came or left, a view answered or sent a request) return the calls to make.
/// The owner makes them, in order, and reports `requestView`'s answer back.
///
/// Every unfinished task gets a view while the server is there; a completed one gets its last update and
/// `terminate`. A task that is already completed when first seen gets none.
public struct JobViewBook: Sendable {
    public enum Action: Equatable, Sendable {
        /// Call `requestView`, then report `viewGranted` or `viewRefused`.
        case requestView(task: ObjectPath, capabilities: Int32, hints: [String: DBusValue])
        case update(view: ObjectPath, properties: [String: DBusValue])
        case terminate(view: ObjectPath, errorCode: UInt32, errorMessage: String)
        /// Call this `org.haul.Haul1.Task` method (`Suspend`, `Resume`, `Cancel`) on the task.
        case control(task: ObjectPath, method: String)
    }

    private enum View: Equatable {
        case requested
        /// The server refused; not asked again until it comes back.
        case refused
        /// With the properties last sent, so that updates carry only what changed.
        case open(ObjectPath, sent: [String: DBusValue])
    }

    private var serverPresent = false
    private var views: [ObjectPath: View] = [:]

    public init() {}

    /// The server took its name (or a new owner did): every unfinished task gets a new view.
    public mutating func serverAppeared(tasks: [ObjectPath: TaskSnapshot]) -> [Action] {
        serverPresent = true
        views = [:]
        return tasks.keys.sorted().flatMap { taskChanged($0, tasks[$0]) }
    }

    /// The server left: its views are gone with it.
    public mutating func serverVanished() {
        serverPresent = false
        views = [:]
    }

    /// hauld is stopping: every open view ends, saying so. The transfers go on when hauld starts again, with new
    /// views.
    public mutating func shutdown() -> [Action] {
        let open = views.values.compactMap { state -> ObjectPath? in
            if case .open(let view, _) = state { view } else { nil }
        }
        serverPresent = false
        views = [:]
        return open.sorted().map {
            .terminate(
                view: $0, errorCode: KDEJobView.ErrorCode.aborted,
                errorMessage: "hauld stopped; the transfer goes on when it starts again."
            )
        }
    }

    /// A task appeared or changed; nil when it was removed.
    public mutating func taskChanged(_ path: ObjectPath, _ task: TaskSnapshot?) -> [Action] {
        guard serverPresent else { return [] }
        switch views[path] {
        case nil:
            guard let task, task.isUnfinished else { return [] }
            views[path] = .requested
            return [
                .requestView(
                    task: path, capabilities: JobViewHints.capabilities(of: task),
                    hints: JobViewHints.request(for: task)
                )
            ]
        case .requested?, .refused?:
            // The answer to the request sends the state as it is then.
            if task == nil { views[path] = nil }
            return []
        case .open(let view, let sent)?:
            return send(task, to: view, of: path, after: sent)
        }
    }

    /// `requestView` answered with `view`; `task` is the task's state now (nil if it has gone meanwhile).
    public mutating func viewGranted(_ view: ObjectPath, for path: ObjectPath, _ task: TaskSnapshot?) -> [Action] {
        guard serverPresent, views[path] == .requested || (views[path] == nil && task == nil) else {
            // Asked of a server that has gone since: that view is no one's to fill.
            return []
        }
        return send(task, to: view, of: path, after: [:])
    }

    /// `requestView` failed: the task goes without a view until the server comes back.
    public mutating func viewRefused(for path: ObjectPath) {
        if views[path] == .requested { views[path] = .refused }
    }

    /// A signal from a view (sent by the server's owner): the task control it asks for, or everything again.
    public mutating func viewRequested(_ member: String, view: ObjectPath) -> [Action] {
        guard let open = openView(view), let method = KDEJobView.requests[member] else { return [] }
        if let method { return [.control(task: open.task, method: method)] }
        return [.update(view: view, properties: open.sent)]
    }

    /// The last update (only what changed) and, once the task has completed or gone, `terminate`.
    private mutating func send(
        _ task: TaskSnapshot?, to view: ObjectPath, of path: ObjectPath, after sent: [String: DBusValue]
    ) -> [Action] {
        var actions: [Action] = []
        var all = sent
        if let task {
            all = JobViewHints.update(for: task)
            let changed = all.filter { sent[$0.key] != $0.value }
            if !changed.isEmpty { actions.append(.update(view: view, properties: changed)) }
        }
        if let task, task.isUnfinished {
            views[path] = .open(view, sent: all)
        } else {
            views[path] = nil
            let (code, message) = JobViewHints.termination(for: task)
            actions.append(.terminate(view: view, errorCode: code, errorMessage: message))
        }
        return actions
    }

    private func openView(_ view: ObjectPath) -> (task: ObjectPath, sent: [String: DBusValue])? {
        for (path, state) in views {
            if case .open(view, let sent) = state { return (path, sent) }
        }
        return nil
    }
}
