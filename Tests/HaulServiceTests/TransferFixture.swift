import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// hauld on a private bus plus the test HTTP server, with helpers to start and follow transfers.
struct TransferFixture {
    let daemon: DaemonFixture
    let server: TestHTTPServer
    /// A fresh folder for downloads.
    let folder: URL

    static let manager = "org.haul.Haul1.Manager"
    static let task = "org.haul.Haul1.Task"

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

    func download(_ pathAndQuery: String, to name: String, options: [String: DBusValue] = [:]) async throws
        -> ObjectPath
    {
        let reply = try await managerCall(
            "DownloadWithOptions", [.string(server.url(pathAndQuery)), .string(file(name)), .vardict(options)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    func managerCall(_ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager, member: member, body
        )
    }

    func taskCall(_ path: ObjectPath, _ member: String) async throws {
        _ = try await client.call(destination: DaemonFixture.name, path: path, interface: Self.task, member: member)
    }

    func property(_ path: ObjectPath, _ name: String) async throws -> DBusValue {
        try await client.property(destination: DaemonFixture.name, path: path, interface: Self.task, name: name)
    }

    /// Waits until the task reaches `state` (generous: retries take seconds).
    func wait(_ path: ObjectPath, until state: String, timeout: Duration = .seconds(30)) async throws {
        // A task that does not exist yet (a CLI still creating it) is simply not there yet.
        let reached = try await daemon.eventually(timeout: timeout) {
            (try? await property(path, "State")) == .string(state)
        }
        let current = try? await property(path, "State")
        #expect(reached, "\(path) did not reach \(state); it is \(String(describing: current))")
    }

    /// Waits until the task has at least `bytes` on disk.
    func wait(_ path: ObjectPath, received bytes: UInt64) async throws {
        let reached = try await daemon.eventually(timeout: .seconds(30)) {
            ((try? await property(path, "BytesReceived"))?.uint64Value ?? 0) >= bytes
        }
        #expect(reached, "\(path) did not receive \(bytes) bytes")
    }

    func errorName(_ path: ObjectPath) async throws -> String {
        try await property(path, "ErrorName").stringValue ?? "?"
    }

    func sha256(of name: String) async throws -> String {
        try await TestHTTPServer.sha256(ofFile: folder.appendingPathComponent(name))
    }
}
