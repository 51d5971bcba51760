import UnixSignals

/// Ctrl-C while haul is attached to a transfer: detach, leaving the transfer to hauld.
enum Interruption {
    /// Returns when SIGINT arrives; cancelling the calling task stops listening.
    static func wait() async {
        for await _ in await UnixSignalsSequence(trapping: .sigint) { return }
    }

    enum Outcome {
        case finished([TaskInfo])
        case detached
    }

    /// Runs `watch` until it returns or Ctrl-C detaches.
    static func detachable(_ watch: @escaping @Sendable () async throws -> [TaskInfo]) async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { .finished(try await watch()) }
            group.addTask {
                await wait()
                return .detached
            }
            let first = try await group.next() ?? .detached
            group.cancelAll()
            return first
        }
    }
}
