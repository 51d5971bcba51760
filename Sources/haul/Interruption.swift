import UnixSignals

/// Ctrl-C while haul is attached to a transfer: detach, leaving the transfer to hauld.
///
/// The trap is set before the transfer starts, so a Ctrl-C at any moment after that is a detach, never lost.
struct Interruption: Sendable {
    private let signals: UnixSignalsSequence

    static func trap() async -> Interruption {
        Interruption(signals: await UnixSignalsSequence(trapping: .sigint))
    }

    enum Outcome {
        case finished([TaskInfo])
        case detached
    }

    /// Runs `watch` until it returns or Ctrl-C detaches.
    func detachable(_ watch: @escaping @Sendable () async throws -> [TaskInfo]) async throws -> Outcome {
        let signals = signals
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { .finished(try await watch()) }
            group.addTask {
                for await _ in signals { break }
                return .detached
            }
            let first = try await group.next() ?? .detached
            group.cancelAll()
            return first
        }
    }
}
