import DBusKit

/// Which process is behind a caller's unique bus name, for `CallerIdentity`: the bus daemon knows it (hauld's
/// `DBusConnection`); an in-process test names one.
protocol CallerProcesses: Sendable {
    func processID(of sender: String) async throws -> UInt32
}

extension DBusConnection: CallerProcesses {
    func processID(of sender: String) async throws -> UInt32 { try await connectionUnixProcessID(sender) }
}
