import HaulTestSupport

/// An idle hauld, after the load: what it costs to keep around.
extension Bench {
    func idle() async throws -> IdleFigures {
        // Whatever the load left behind (closing connections, a last progress tick) settles first.
        try await Task.sleep(for: .seconds(2))
        let before = try ProcessSample(pid: pid)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(settings.idleSeconds))
        let end = ContinuousClock.now
        let after = try ProcessSample(pid: pid)
        return IdleFigures(
            seconds: start.duration(to: end).seconds, cpuSeconds: after.threadCPUTime(since: before).seconds,
            wakeups: after.wakeups(since: before),
            signals: client.signals.signals(from: start, to: end).count, memory: MemoryFigures(after)
        )
    }
}
