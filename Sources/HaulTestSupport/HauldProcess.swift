public import Foundation
import DBusKit

/// A `hauld` built by this package, running on a private bus with its own state directory.
public final class HauldProcess: Sendable {
    public let running: Command.Running
    public let stateDirectory: URL

    /// Starts hauld on `bus` and waits until it owns `org.haul.Haul1`.
    public init(bus: PrivateBus, stateDirectory: URL? = nil, arguments: [String] = []) async throws {
        let state = stateDirectory ?? bus.directory.appendingPathComponent("state")
        self.stateDirectory = state
        var environment = bus.environment
        environment["XDG_STATE_HOME"] = state.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        running = try Command.start(Command.built("hauld"), arguments, environment: environment)
        let probe = try await DBusConnection.connect(address: bus.address)
        defer { Task { await probe.close() } }
        let deadline = ContinuousClock.now + .seconds(20)
        while try await !probe.nameHasOwner("org.haul.Haul1") {
            guard running.isRunning, ContinuousClock.now < deadline else {
                throw TestSupportError("hauld did not take org.haul.Haul1")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public var pid: Int32 { running.pid }

    /// Sends `signal` and collects the exit status and output.
    public func stop(signal: Int32 = SIGTERM) async -> CommandResult {
        kill(running.pid, signal)
        return await Command.finish(running)
    }

    deinit {
        if running.isRunning { kill(running.pid, SIGKILL) }
    }
}
