package import Foundation

/// What a Flatpak sandbox shows hauld, without Flatpak: a command run chrooted (in a mount namespace of its own) into
/// a root that holds `/.flatpak-info` naming `appID`, and the host's folders bound in, so that the command runs as
/// usual and `/proc/PID/root/.flatpak-info` is what a sandboxed app's would be. Needs root.
package final class FakeFlatpak: Sendable {
    package let root: URL
    private static let folders = ["usr", "lib", "lib64", "bin", "sbin", "etc", "opt", "tmp", "work", "proc", "dev"]

    package init(appID: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-flatpak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        try Data("[Application]\nname=\(appID)\n\n[Instance]\ninstance-id=1\n".utf8)
            .write(to: root.appendingPathComponent(".flatpak-info"))
    }

    /// A launcher for ``Command``: the command then runs in the fake sandbox, with the same process id.
    package var launcher: [String] {
        let script = """
            for d in \(Self.folders.joined(separator: " ")); do
                if [ -e "/$d" ]; then mkdir -p "$0/$d" && mount --rbind "/$d" "$0/$d" || exit 70; fi
            done
            exec chroot "$0" "$@"
            """
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, root.path]
    }

    /// Removes the root, once the command has ended (its mount namespace, and the mounts in it, with it): only the
    /// empty mount points and the info file, never anything below them.
    package func remove() {
        for folder in Self.folders { rmdir(root.appendingPathComponent(folder).path) }
        unlink(root.appendingPathComponent(".flatpak-info").path)
        rmdir(root.path)
    }
}
