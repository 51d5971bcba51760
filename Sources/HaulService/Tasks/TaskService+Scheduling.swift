import DBusKit
import FoundationEssentials
import HaulContract
import HaulCore
import ServiceKit

/// The queue's side of a task's settings and the Manager's `MaxRunningTasks`: `TransferQueue` decides, `perform`
/// carries it out.
extension TaskService {
    /// A task's `Priority`: it joins the end of its new priority's queue; a running transfer goes on.
    func setPriority(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .string(let name) = value, let parsed = TaskPriorityName(rawValue: name) else {
            let names = TaskPriorityName.allCases.map(\.rawValue).joined(separator: " or ")
            throw .invalidArgs("\(TaskProperty.priority.name) must be \(names)")
        }
        try checkNotCompleted(id)
        let priority = TransferPriority(parsed)
        tasks[id]?.record.priority = priority
        persist(id)
        publish(id, TaskProperty.values([.priority: .string(parsed.rawValue)]))
        perform(queue.priorityChanged(id, to: priority, now: clock.now))
        await settled()
    }

    /// A task's `AllowMetered`: kept with the task, and applied at once (a running transfer on a metered network stops
    /// and waits; a waiting one continues).
    func setAllowMetered(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        guard case .boolean(let allowed) = value else {
            throw .invalidArgs("\(TaskProperty.allowMetered.name) must be a b")
        }
        try checkNotCompleted(id)
        tasks[id]?.record.allowMetered = allowed
        persist(id)
        publish(id, TaskProperty.values([.allowMetered: .boolean(allowed)]))
        perform(queue.allowMeteredChanged(id, to: allowed, now: clock.now))
        await settled()
    }

    /// `SetURL`: a suspended or queued task gets a new URL (an expired link); its bytes on disk stay, and the next
    /// attempt validates them with If-Range as any resume does, so a different file starts again from zero.
    func setURL(_ text: String, of id: UInt32) async throws(DBusError) {
        let url = try request { () throws(TransferRequestError) in try TransferURL(text) }
        guard let task = tasks[id], let shown = queue.publicState(of: id) else {
            throw HaulErrorName.notFound.error("no task \(id)")
        }
        switch shown.state {
        case .completed:
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        case .canceling:
            throw HaulErrorName.taskNotSuspended.error("task \(id) is being cancelled")
        case .running where !shown.isQueued || task.attempt != nil:
            throw HaulErrorName.taskNotSuspended.error("task \(id) is transferring; suspend it first")
        case .running, .suspended:
            break
        }
        let hadSecrets = task.record.mayHoldSecrets
        tasks[id]?.record.url = url.url.absoluteString
        persist(id, erasingPrevious: hadSecrets)
        publish(id, TaskProperty.values([.url: .string(TransferURL.redacted(url.url.absoluteString).busSafe)]))
        perform(queue.urlChanged(id, isLoopback: url.isLoopback, now: clock.now))
        await settled()
    }

    /// Throws `NotFound` for a task the service does not hold, `TaskCompleted` for a completed one.
    func checkNotCompleted(_ id: UInt32) throws(DBusError) {
        guard let entry = queue.entry(id) else { throw HaulErrorName.notFound.error("no task \(id)") }
        guard entry.lifecycle.state != .completed else {
            throw HaulErrorName.taskCompleted.error("task \(id) has completed")
        }
    }

    /// The Manager's `MaxRunningTasks`: raising it starts queued tasks at once; lowering it stops nothing.
    func setMaxRunningTasks(_ value: DBusValue) async throws(DBusError) {
        guard case .uint32(let limit) = value else {
            throw .invalidArgs("\(ManagerProperty.maxRunningTasks.name) must be a u (0: no limit)")
        }
        try await changeSettings([.maxRunningTasks: .uint32(limit)]) { $0.maxRunningTasks = limit }
        perform(queue.maxRunningTasksChanged(to: limit, now: clock.now))
        await settled()
    }
}

extension ManagedTask {
    /// Whether the task's URL is loopback: it never waits for the network.
    var isLoopback: Bool { (try? TransferURL(record.url))?.isLoopback ?? false }
}
