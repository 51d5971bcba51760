import HaulTestSupport

/// An idle hauld, after the load: what it costs to keep around.
extension Bench {
    func idle() async throws -> IdleFigures {
        // async-http-client keeps the load's connections for reuse and closes them after 60 s unused: a wake-up of
        // each event loop once, not a timer that repeats. Idle is what follows, once they are closed.
        let loadEnded = ContinuousClock.now
        let connectionsClosed = try await pooledConnectionsClosed()
        // hauld trims its heap once more a minute after the last transfer that may have left a connection in the pool
        // (HeapTrim), even when the server closed that connection sooner: its one wake-up after a load
        // comes before the idle time too.
        try await Task.sleep(until: loadEnded.advanced(by: .seconds(61)), clock: .continuous)
        // Whatever else the load left behind (a last progress tick, record saves) settles too.
        try await Task.sleep(for: .seconds(2))
        let before = try ProcessSample(pid: pid)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(settings.idleSeconds))
        let end = ContinuousClock.now
        let after = try ProcessSample(pid: pid)
        return IdleFigures(
            connectionsClosedSeconds: connectionsClosed.seconds, startSeconds: loadEnded.duration(to: start).seconds,
            seconds: start.duration(to: end).seconds, cpuSeconds: after.threadCPUTime(since: before).seconds,
            wakeups: after.wakeups(since: before),
            signals: client.signals.signals(from: start, to: end).count, memory: MemoryFigures(after)
        )
    }
}
