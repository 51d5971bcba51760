import DBusKit
import Foundation
import HaulContract
import HaulTestSupport

/// What the phases share: the workspace, the server, hauld and the bench's connection to it.
struct Bench: Sendable {
    struct Settings: Sendable {
        var rounds: Int
        var transfers: Int
        var largeSize: Int
        var smallSize: Int
        var controlSamples: Int
        var indicatorRepetitions: Int
        var idleSeconds: Int
        var segmentedSize: Int
        var segmentRounds: Int
        var scaleTasks: Int
    }

    let settings: Settings
    let workspace: Workspace
    let server: any FileServer
    let hauld: HauldProcess
    let client: HauldClient
    /// hauld's bus, for a client of its own.
    let busAddress: String

    var pid: pid_t { hauld.pid }

    /// A URL and where to save it.
    struct Download: Sendable {
        let url: String
        let path: String
    }

    /// One `curl` run over `downloads`, and its time once what it wrote is synced.
    struct CurlRun {
        let wall: Duration
        let synced: Duration
        let cpu: Duration
        /// The CPU time of the `fsync` calls: the kernel's write-out work, which hauld's own `fsync` is charged.
        let syncCPU: Duration
        let peakResidentBytes: Int

        var syncedCPU: Duration { cpu + syncCPU }
    }

    func curl(_ downloads: [Download], parallel: Bool) async throws -> CurlRun {
        var arguments = ["-s", "-S", "--fail", "--noproxy", "*"]
        if parallel { arguments += ["--parallel", "--parallel-max", String(downloads.count)] }
        for download in downloads { arguments += ["-o", download.path, download.url] }
        let start = ContinuousClock.now
        let result = try await Command.run("curl", arguments)
        let exited = ContinuousClock.now
        guard result.status == 0 else { throw TestSupportError("curl failed (\(result.status)): \(result.stderr)") }
        let syncCPU = try Self.sync(downloads.map(\.path))
        let synced = ContinuousClock.now
        try verify(downloads)
        return CurlRun(
            wall: start.duration(to: exited), synced: start.duration(to: synced), cpu: result.usage.cpuTime,
            syncCPU: syncCPU, peakResidentBytes: result.usage.peakResidentBytes
        )
    }

    /// hauld's run over `downloads`: from the first `Download` call to the last `TaskDidComplete`.
    struct HauldRun {
        let start: ContinuousClock.Instant
        let end: ContinuousClock.Instant
        let cpu: Duration
        var wall: Duration { start.duration(to: end) }
    }

    /// Starts every download at once, waits for all of them, then forgets the tasks.
    func hauldDownloads(_ downloads: [Download]) async throws -> HauldRun {
        let before = try ProcessSample(pid: pid)
        let start = ContinuousClock.now
        let tasks = try await startDownloads(downloads)
        let completions = try await client.completions(of: tasks)
        let after = try ProcessSample(pid: pid)
        let end = completions.map(\.instant).max() ?? start
        try await client.forget(tasks)
        try verify(downloads)
        return HauldRun(start: start, end: end, cpu: after.cpuTime(since: before))
    }

    /// Waits until hauld holds no TCP connection any more, and returns how long that took: async-http-client keeps a
    /// load's connections for reuse and closes them after 60 s unused.
    func pooledConnectionsClosed() async throws -> Duration {
        let start = ContinuousClock.now
        while try ProcessSample.openTCPSockets(pid: pid) > 0 {
            guard start.duration(to: .now) < .seconds(90) else {
                throw TestSupportError("hauld still holds TCP connections 90 s after the load")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        return start.duration(to: .now)
    }

    /// Calls `Download` for each, all at once; the tasks in the order of `downloads`.
    func startDownloads(_ downloads: [Download]) async throws -> [ObjectPath] {
        let client = client
        return try await withThrowingTaskGroup(of: (Int, ObjectPath).self) { group in
            for (index, download) in downloads.enumerated() {
                group.addTask { (index, try await client.calls.download(download.url, to: download.path)) }
            }
            var tasks = [ObjectPath?](repeating: nil, count: downloads.count)
            for try await (index, task) in group { tasks[index] = task }
            return tasks.compactMap { $0 }
        }
    }

    /// Every file has the size of what was served.
    private func verify(_ downloads: [Download]) throws {
        for download in downloads {
            let name = URL(string: download.url)?.lastPathComponent ?? ""
            let served = workspace.served.appendingPathComponent(name).path
            let expected = try FileManager.default.attributesOfItem(atPath: served)[.size] as? Int
            let actual = try FileManager.default.attributesOfItem(atPath: download.path)[.size] as? Int
            guard expected == actual else {
                throw TestSupportError("\(download.path) holds \(actual ?? -1) bytes, not \(expected ?? -1)")
            }
        }
    }

    /// Syncs every file; returns the CPU time this thread spent doing it.
    private static func sync(_ paths: [String]) throws -> Duration {
        let start = threadCPUTime()
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw TestSupportError("cannot open \(path)") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw TestSupportError("cannot sync \(path)") }
        }
        return threadCPUTime() - start
    }

    private static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
