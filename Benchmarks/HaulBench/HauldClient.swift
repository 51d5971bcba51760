import DBusKit
import HaulContract
import HaulTestSupport

/// The bench's bus connection to hauld: the calls it times and the log of the signals hauld emits.
struct HauldClient: Sendable {
    let calls: HauldCalls
    let signals: SignalLog

    /// Connects and, when `listening` (as a panel does), starts logging every signal from hauld's current unique
    /// name; a client that only calls receives no signal.
    static func connect(address: String, listening: Bool = true) async throws -> HauldClient {
        let connection = try await DBusConnection.connect(address: address)
        let signals = SignalLog()
        guard listening else { return HauldClient(calls: HauldCalls(connection), signals: signals) }
        let owner = try await connection.nameOwner(HaulBus.name)
        let stream = try await connection.messages(matching: [MatchRule(kind: .signal, sender: owner)])
        // Ends with the stream, when the connection closes.
        Task {
            for await message in stream { signals.record(BusSignal(message, at: .now)) }
        }
        return HauldClient(calls: HauldCalls(connection), signals: signals)
    }

    func close() async { await calls.connection.close() }

    /// Waits for every task's `TaskDidComplete`; throws if one ended with an error not in `allowed` (nil: success)
    /// or the wait exceeds `timeout`.
    func completions(
        of tasks: [ObjectPath], timeout: Duration = .seconds(300), allowing allowed: [HaulErrorName?] = [nil]
    ) async throws -> [BusSignal] {
        let names = Set(allowed.map { $0?.fullName ?? "" })
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = signals.completions(of: tasks) {
                if let failed = found.first(where: { $0.errorName.map { names.contains($0) } != true }) {
                    throw TestSupportError("\(failed.task?.rawValue ?? "?") ended with \(failed.errorName ?? "?")")
                }
                return found
            }
            guard ContinuousClock.now < deadline else { throw TestSupportError("transfers did not complete") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Forgets completed tasks, so that the next round starts from an empty list.
    func forget(_ tasks: [ObjectPath]) async throws {
        for task in tasks { try await calls.call(.forget, on: task) }
    }
}
