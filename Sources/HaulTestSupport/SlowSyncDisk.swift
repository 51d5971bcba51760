package import Foundation
import Synchronization

/// A folder on a disk slow to sync, for one test: `scripts/slow-sync-fs` mounts a temporary folder through FUSE,
/// and every `fsync` or `fdatasync` of a file in it waits `syncSeconds` before it syncs.
///
/// A sync that waits on an event loop stalls every transfer and reply that loop carries, which nothing else a test
/// can see shows: it still succeeds. With this disk, a test learns when a sync has begun (``syncBegun(timeout:)``)
/// and can time the event loops while it lasts.
package final class SlowSyncDisk: Sendable {
    /// The mounted folder.
    package let folder: URL
    private let directory: URL
    private let process: Command.Running
    private let stopped = Mutex(false)

    package init(syncSeconds: Double) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-disk-\(UUID().uuidString)")
        folder = directory.appendingPathComponent("mounted")
        let backing = directory.appendingPathComponent("backing")
        for made in [folder, backing] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        let process: Command.Running
        do {
            process = try Command.start(
                try TestHTTPServer.python(), [Self.scriptPath, backing.path, folder.path, String(syncSeconds)]
            )
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.process = process
        do {
            let line = try await process.firstLine(timeout: 30, of: "scripts/slow-sync-fs")
            guard line == "MOUNTED" else {
                throw TestSupportError(
                    "scripts/slow-sync-fs printed \(line.debugDescription) instead of MOUNTED\(process.abandon())"
                )
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Waits for the next sync to begin, and returns the path it syncs, from the mount's root (`/file.part`).
    package func syncBegun(timeout: Double) async throws -> String {
        let line = try await process.firstLine(timeout: timeout)
        guard line.hasPrefix("SYNC ") else {
            throw TestSupportError("scripts/slow-sync-fs printed \(line.debugDescription) instead of a sync")
        }
        return String(line.dropFirst(5))
    }

    /// Unmounts (SIGTERM; a lazy `umount` should the script not end within 5 s) and removes the folders.
    /// Idempotent; also done on deinit.
    package func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        process.terminate()
        // A mount left behind (the script killed) would keep the folder from being removed.
        if (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8))?.contains(folder.path) ?? false {
            _ = umount2(folder.path, Int32(MNT_DETACH))
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// `scripts/slow-sync-fs`, found from this source file (Sources/HaulTestSupport/../../scripts/).
    private static var scriptPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/slow-sync-fs").path
    }
}
