import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld on a private bus plus the test HTTP server, with helpers to start and follow transfers.
struct TransferFixture {
    let daemon: DaemonFixture
    let server: TestHTTPServer
    /// A fresh folder for downloads.
    let folder: URL

    static let manager = HaulBus.managerInterface
    static let task = HaulBus.taskInterface

    /// hauld gives up on a silent response after `readTimeout` seconds (short, for stall tests); `launcher` and
    /// `environment` as for ``HauldProcess``.
    static func with(
        readTimeout: Double = 30, stateDirectory: URL? = nil, launcher: [String] = [],
        environment: [String: String] = [:], _ body: (TransferFixture) async throws -> Void
    ) async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        try await DaemonFixture.with(
            stateDirectory: stateDirectory, arguments: ["--read-timeout", "\(readTimeout)"], launcher: launcher,
            environment: environment
        ) { daemon throws in
            let folder = daemon.bus.directory.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await body(TransferFixture(daemon: daemon, server: server, folder: folder))
        }
    }

    var client: DBusConnection { daemon.client }

    func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func download(_ pathAndQuery: String, to name: String, options: [DownloadOption: DBusValue] = [:]) async throws
        -> ObjectPath
    {
        let reply = try await managerCall(
            .downloadWithOptions, [.string(server.url(pathAndQuery)), .string(file(name)), .vardict(options.byName)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    func managerCall(_ method: ManagerMethod, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager,
            member: method.rawValue, body
        )
    }

    func taskCall(_ path: ObjectPath, _ method: TaskMethod) async throws {
        _ = try await client.call(
            destination: DaemonFixture.name, path: path, interface: Self.task, member: method.rawValue
        )
    }

    func property(_ path: ObjectPath, _ property: TaskProperty) async throws -> DBusValue {
        try await client.property(
            destination: DaemonFixture.name, path: path, interface: Self.task, name: property.name
        )
    }

    /// Waits until the task reaches `state` (generous: retries take seconds).
    func wait(_ path: ObjectPath, until state: TaskStateName, timeout: Duration = .seconds(30)) async throws {
        // A task that does not exist yet (a CLI still creating it) is simply not there yet.
        try await waitUntil(
            "\(path) to reach \(state.rawValue)", timeout: timeout,
            seen: { "State \(String(describing: try? await property(path, .state)))" }
        ) {
            (try? await property(path, .state)) == .state(state)
        }
    }

    /// Waits until the task has at least `bytes` on disk.
    func wait(_ path: ObjectPath, received bytes: UInt64) async throws {
        try await waitUntil("\(path) to receive \(bytes) bytes", timeout: .seconds(30)) {
            ((try? await property(path, .bytesReceived))?.uint64Value ?? 0) >= bytes
        }
    }

    func errorName(_ path: ObjectPath) async throws -> String {
        try await property(path, .errorName).stringValue ?? "?"
    }

    func sha256(of name: String) async throws -> String {
        try await TestHTTPServer.sha256(ofFile: folder.appendingPathComponent(name))
    }
}
