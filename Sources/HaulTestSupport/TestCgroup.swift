package import Foundation

/// A cgroup of the test's own in the cgroup2 hierarchy, named like a unit (`app-gnome-firefox-1234.scope`), to run a
/// command in: what `/proc/PID/cgroup` then shows of it is what a desktop's launcher would have made (`systemd-run
/// --user --scope` needs a systemd user manager, which these machines do not run). Needs root, or a delegated
/// hierarchy.
package final class TestCgroup: Sendable {
    /// The folder of the unit's cgroup.
    package let directory: URL
    private let parent: URL

    /// Creates `<cgroup2>/haul-test-<uuid>/<unit>`.
    package init(unit: String) throws {
        guard let root = Self.cgroup2Root() else { throw TestSupportError("no cgroup2 hierarchy is mounted") }
        parent = root.appendingPathComponent("haul-test-\(UUID().uuidString)")
        directory = parent.appendingPathComponent(unit)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A launcher for ``Command``: a shell that moves itself into the cgroup, then execs the command, keeping its
    /// process id.
    package var launcher: [String] {
        ["/bin/sh", "-c", "echo $$ > \"\(directory.path)/cgroup.procs\" && exec \"$0\" \"$@\""]
    }

    /// Removes the cgroups (once the processes in them have ended).
    package func remove() {
        rmdir(directory.path)
        rmdir(parent.path)
    }

    /// Where cgroup2 is mounted: `/sys/fs/cgroup` on a unified system, `/sys/fs/cgroup/unified` on a hybrid one.
    static func cgroup2Root() -> URL? {
        guard let mounts = try? ProcFile.read("/proc/self/mountinfo") else { return nil }
        for line in mounts.split(separator: "\n") {
            // `… mount-point options - fstype source super-options`
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count > 4 { return URL(fileURLWithPath: String(fields[4])) }
        }
        return nil
    }
}
