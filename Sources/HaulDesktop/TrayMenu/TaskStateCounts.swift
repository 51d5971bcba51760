package import HaulContract

/// How many tasks run and how many are suspended: what the tray menu's items depend on, kept up to date task by task,
/// so that a change costs the same with ten thousand tasks as with one.
package struct TaskStateCounts: Sendable, Equatable {
    package private(set) var running = 0
    package private(set) var suspended = 0

    package init(_ tasks: some Sequence<TaskSnapshot> = []) {
        for task in tasks { add(task) }
    }

    package mutating func add(_ task: TaskSnapshot) {
        if task.isRunning { running += 1 }
        if task.isSuspended { suspended += 1 }
    }

    /// Uncounts a task `add(_:)` counted, as it was then.
    package mutating func remove(_ task: TaskSnapshot) {
        if task.isRunning { running -= 1 }
        if task.isSuspended { suspended -= 1 }
    }
}
