package import Foundation

/// One reading of a running process from `/proc`: its CPU time, memory and wake-ups so far.
package struct ProcessSample: Sendable {
    /// User plus system time, in clock ticks (`/proc/<pid>/stat`).
    package let cpuTicks: Int
    /// `VmRSS`.
    package let residentBytes: Int
    /// `VmHWM`: the peak resident set size since start or since `resetPeak`.
    package let peakResidentBytes: Int
    /// `RssAnon`: the part of `VmRSS` that is the process's own memory, not pages of mapped files (code).
    package let anonymousBytes: Int
    /// `Pss` (`smaps_rollup`): the resident set with each shared page divided among the processes mapping it.
    package let proportionalBytes: Int
    /// Voluntary context switches of each thread alive now, by thread id: each one a wake-up (the thread waited, and
    /// something woke it).
    package let voluntarySwitches: [Int: Int]
    /// Involuntary context switches of each thread alive now, by thread id: each one a preemption (the thread was
    /// running and another took its CPU), which costs no wake-up; how many there are depends on what else runs and
    /// on the host's scheduler more than on the program.
    package let involuntarySwitches: [Int: Int]
    /// Nanoseconds on a CPU of each thread alive now (`schedstat`), by thread id: finer than clock ticks.
    package let threadRuntimes: [Int: Int]

    package static let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))

    package init(pid: pid_t) throws {
        let stat = try ProcFile.read("/proc/\(pid)/stat")
        // The command name (field 2) may hold spaces; the fields after it are plain numbers.
        guard let end = stat.lastIndex(of: ")") else { throw TestSupportError("cannot parse /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // utime and stime are fields 14 and 15; fields[0] is field 3.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw TestSupportError("cannot parse /proc/\(pid)/stat")
        }
        cpuTicks = user + system
        let status = Self.fields(try ProcFile.read("/proc/\(pid)/status"))
        residentBytes = (status["VmRSS"] ?? 0) * 1024
        peakResidentBytes = (status["VmHWM"] ?? 0) * 1024
        anonymousBytes = (status["RssAnon"] ?? 0) * 1024
        proportionalBytes = ((try? Self.fields(ProcFile.read("/proc/\(pid)/smaps_rollup")))?["Pss"] ?? 0) * 1024
        var voluntary: [Int: Int] = [:]
        var involuntary: [Int: Int] = [:]
        var runtimes: [Int: Int] = [:]
        for thread in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            guard let id = Int(thread), let text = try? ProcFile.read("/proc/\(pid)/task/\(thread)/status") else {
                continue
            }
            let counts = Self.fields(text)
            voluntary[id] = counts["voluntary_ctxt_switches"] ?? 0
            involuntary[id] = counts["nonvoluntary_ctxt_switches"] ?? 0
            let schedstat = (try? ProcFile.read("/proc/\(pid)/task/\(thread)/schedstat")) ?? ""
            runtimes[id] = schedstat.split(separator: " ").first.flatMap { Int($0) } ?? 0
        }
        voluntarySwitches = voluntary
        involuntarySwitches = involuntary
        threadRuntimes = runtimes
    }

    /// Wake-ups between two samples: those of threads alive at both, plus all of threads started since (those of a
    /// thread that ended in between are lost with it).
    package func wakeups(since earlier: ProcessSample) -> Int {
        Self.growth(of: voluntarySwitches, since: earlier.voluntarySwitches)
    }

    /// Preemptions between two samples, counted as `wakeups(since:)` counts.
    package func preemptions(since earlier: ProcessSample) -> Int {
        Self.growth(of: involuntarySwitches, since: earlier.involuntarySwitches)
    }

    /// CPU time between two samples to the nanosecond, counted as `wakeups(since:)` counts.
    package func threadCPUTime(since earlier: ProcessSample) -> Duration {
        .nanoseconds(Self.growth(of: threadRuntimes, since: earlier.threadRuntimes))
    }

    private static func growth(of counters: [Int: Int], since earlier: [Int: Int]) -> Int {
        counters.reduce(0) { total, thread in total + thread.value - (earlier[thread.key] ?? 0) }
    }

    /// CPU time between two samples.
    package func cpuTime(since earlier: ProcessSample) -> Duration {
        .milliseconds((cpuTicks - earlier.cpuTicks) * 1000 / Self.ticksPerSecond)
    }

    /// The TCP sockets the process holds: its descriptors matched against its network namespace's `tcp` and `tcp6`
    /// tables (connections in TIME_WAIT belong to no process).
    package static func openTCPSockets(pid: pid_t) throws -> Int {
        var inodes = Set<String>()
        for table in ["tcp", "tcp6"] {
            for socket in try TCPSocketTable(path: "/proc/\(pid)/net/\(table)").sockets where socket.inode != "0" {
                inodes.insert(socket.inode)
            }
        }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        return descriptors.count { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)"),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }
    }

    /// Starts `VmHWM` over from the current resident set size (`clear_refs` 5).
    package static func resetPeak(pid: pid_t) throws {
        guard let handle = FileHandle(forWritingAtPath: "/proc/\(pid)/clear_refs") else {
            throw TestSupportError("cannot open /proc/\(pid)/clear_refs")
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data("5".utf8))
    }

    /// `Name:\t   123 kB` lines as numbers (without their unit).
    private static func fields(_ text: String) -> [String: Int] {
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].split(whereSeparator: \.isWhitespace).first.flatMap {
                Int($0)
            }
            if let value { values[String(line[..<colon])] = value }
        }
        return values
    }
}
