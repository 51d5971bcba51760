package import DBusKit
package import HaulContract

/// Which task has which KDE job view, as a pure state machine: events from the bus (a task changed or went
/// away, the job view server got a new owner, a view answered or sent a request) return the calls to make.
/// The owner makes them in order, and reports `requestView`'s answer back whenever it comes: requests are
/// answered concurrently with everything else, so a slow Plasma delays no other panel and no button.
///
/// Every unfinished task gets a view while the server is there; a completed one gets its last update and
/// `terminate`. A task that is already completed when first seen gets none. Progress alone (bytes, percent,
/// speed) goes out at most every ``progressInterval`` per view; any other change at once.
package struct JobViewBook: Sendable {
    package typealias Instant = ContinuousClock.Instant

    /// Plasma redraws (and re-broadcasts to launchers) on every update: twice a second is plenty for a bar.
    package static let progressInterval: Duration = .milliseconds(500)

    package enum Action: Equatable, Sendable {
        /// Call `requestView` of `server` (the owner's unique name, so that a request never reaches a later owner),
        /// then report `viewGranted` or `viewRefused`.
        case requestView(
            task: ObjectPath, server: String, desktopEntry: String, capabilities: Int32, hints: [String: DBusValue]
        )
        case update(view: ObjectPath, properties: [String: DBusValue])
        case terminate(view: ObjectPath, errorCode: UInt32, errorMessage: String)
        /// Call this `org.haul.Haul1.Task` method (`Suspend`, `Resume`, `Cancel`) on the task.
        case control(task: ObjectPath, method: TaskMethod)
    }

    private enum View: Equatable {
        case requested
        /// The server refused; not asked again until a new owner comes.
        case refused
        /// With the properties last sent, so that updates carry only what changed, and when progress last went.
        case open(ObjectPath, sent: [String: DBusValue], progressSentAt: Instant)
    }

    /// The unique name owning `org.kde.JobViewServer`, if any.
    private var server: String?
    private var isStopping = false
    private var views: [ObjectPath: View] = [:]

    package init() {}

    /// The server's name is owned by `owner` now (nil: by no one). A new owner gets a view for every unfinished
    /// task, the old owner's views having gone with it; the owner already known changes nothing.
    package mutating func serverOwner(_ owner: String?, tasks: [ObjectPath: TaskSnapshot], now: Instant) -> [Action] {
        guard owner != server else { return [] }
        server = owner
        views = [:]
        return tasks.keys.sorted().flatMap { taskChanged($0, tasks[$0], now: now) }
    }

    /// hauld is stopping: every open view ends quietly (the transfers go on when hauld starts again, with new
    /// views), and so does any view granted from now on.
    package mutating func shutdown() -> [Action] {
        isStopping = true
        let open = views.values.compactMap { state -> ObjectPath? in
            if case .open(let view, _, _) = state { view } else { nil }
        }
        views = [:]
        return open.sorted().map {
            .terminate(
                view: $0, errorCode: KDEJobView.ErrorCode.userCanceled,
                errorMessage: "hauld stopped; the transfer goes on when it starts again."
            )
        }
    }

    /// A task appeared or changed; nil when it was removed.
    package mutating func taskChanged(_ path: ObjectPath, _ task: TaskSnapshot?, now: Instant) -> [Action] {
        guard let server, !isStopping else { return [] }
        switch views[path] {
        case nil:
            guard let task, task.isUnfinished else { return [] }
            views[path] = .requested
            return [
                .requestView(
                    task: path, server: server, desktopEntry: KDEJobView.entry(for: task),
                    capabilities: JobViewHints.capabilities(of: task),
                    hints: JobViewHints.request(for: task)
                )
            ]
        case .requested?, .refused?:
            // The answer to the request sends the state as it is then.
            if task == nil { views[path] = nil }
            return []
        case .open(let view, let sent, let progressSentAt)?:
            let hints = task.map(JobViewHints.update(for:))
            if let task, let hints, task.isUnfinished, now < progressSentAt + Self.progressInterval,
                hints.allSatisfy({ sent[$0.key] == $0.value || JobViewHints.isProgress($0.key) })
            {
                return []  // only progress changed, and it went out a moment ago: the next update carries it
            }
            return send(task, hints, to: view, of: path, after: sent, sentAt: progressSentAt, now: now)
        }
    }

    /// `server` answered `requestView` for the task at `path` with `view`; `task` is the task's state now (nil if
    /// it has gone meanwhile).
    package mutating func viewGranted(
        _ view: ObjectPath, for path: ObjectPath, from server: String, _ task: TaskSnapshot?, now: Instant
    ) -> [Action] {
        // A server that has gone took the view along.
        guard server == self.server else { return [] }
        guard !isStopping, views[path] == .requested else {
            // No one will fill it (the task went away, or hauld is stopping): end it quietly.
            return [.terminate(view: view, errorCode: KDEJobView.ErrorCode.userCanceled, errorMessage: "")]
        }
        return send(task, task.map(JobViewHints.update(for:)), to: view, of: path, after: [:], sentAt: now, now: now)
    }

    /// Whether the task at `path` has a view, or is about to: the view shows its ending.
    package func isShowing(_ path: ObjectPath) -> Bool {
        switch views[path] {
        case .requested?, .open?: true
        case .refused?, nil: false
        }
    }

    /// `server`'s `requestView` failed: the task goes without a view until a new owner comes.
    package mutating func viewRefused(for path: ObjectPath, from server: String) {
        if server == self.server, views[path] == .requested { views[path] = .refused }
    }

    /// A signal from a view (sent by the server's owner): the task control it asks for, or everything again.
    package mutating func viewRequested(_ member: String, view: ObjectPath) -> [Action] {
        guard let open = openView(view), let request = KDEJobView.Request(rawValue: member) else { return [] }
        guard let method = request.taskMethod else { return [.update(view: view, properties: open.sent)] }
        return [.control(task: open.task, method: method)]
    }

    /// The last update (only what changed in `hints`, the task's `JobViewHints.update`) and, once the task has
    /// completed or gone, `terminate`. `sentAt` is when the view last got an update.
    private mutating func send(
        _ task: TaskSnapshot?, _ hints: [String: DBusValue]?, to view: ObjectPath, of path: ObjectPath,
        after sent: [String: DBusValue], sentAt: Instant, now: Instant
    ) -> [Action] {
        var actions: [Action] = []
        var all = sent
        if let hints {
            all = hints
            let changed = all.filter { sent[$0.key] != $0.value }
            if !changed.isEmpty { actions.append(.update(view: view, properties: changed)) }
        }
        if let task, task.isUnfinished {
            views[path] = .open(view, sent: all, progressSentAt: actions.isEmpty ? sentAt : now)
        } else {
            views[path] = nil
            let (code, message) = JobViewHints.termination(for: task)
            actions.append(.terminate(view: view, errorCode: code, errorMessage: message))
        }
        return actions
    }

    private func openView(_ view: ObjectPath) -> (task: ObjectPath, sent: [String: DBusValue])? {
        for (path, state) in views {
            if case .open(view, let sent, _) = state { return (path, sent) }
        }
        return nil
    }
}
