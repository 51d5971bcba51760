import DBusKit

/// The tasks by the file each names (a download's destination or folder, an upload's source): whether another task
/// already downloads to a path is one lookup, where a pass over ten thousand tasks per new task made creating them
/// quadratic.
struct TaskPaths {
    private var ids: [String: Set<UInt32>] = [:]

    mutating func insert(_ id: UInt32, at path: String) {
        ids[path, default: []].insert(id)
    }

    mutating func remove(_ id: UInt32, at path: String) {
        ids[path]?.remove(id)
        if ids[path]?.isEmpty == true { ids[path] = nil }
        ids.shrinkIfSparse()
    }

    /// The tasks naming `path`.
    subscript(path: String) -> Set<UInt32> { ids[path] ?? [] }
}
