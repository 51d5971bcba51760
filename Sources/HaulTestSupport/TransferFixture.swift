package import DBusKit
package import Foundation
package import HaulContract

/// hauld on a private bus plus the test HTTP server, with helpers to start and follow transfers.
package struct TransferFixture {
    package let daemon: DaemonFixture
    package let server: TestHTTPServer
    /// A fresh folder for downloads.
    package let folder: URL

    /// A fixture around a hauld and a server the caller started.
    package init(daemon: DaemonFixture, server: TestHTTPServer, folder: URL) {
        self.daemon = daemon
        self.server = server
        self.folder = folder
    }

    /// hauld gives up on a silent response after `readTimeout` seconds (short, for stall tests); `launcher` and
    /// `environment` as for ``HauldProcess``.
    package static func with(
        readTimeout: Double = 30, stateDirectory: URL? = nil, launcher: [String] = [],
        environment: [String: String] = [:], _ body: (TransferFixture) async throws -> Void
    ) async throws {
        let server = try await TestHTTPServer()
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

    package var client: DBusConnection { daemon.client }

    package func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// hauld's contract as typed calls over the fixture's client.
    package var calls: HauldCalls { HauldCalls(client) }

    /// Downloads the server's `pathAndQuery` into the fixture's folder as `name`.
    package func download(
        _ pathAndQuery: String, to name: String, options: [DownloadOption: DBusValue] = [:]
    ) async throws -> ObjectPath {
        try await calls.download(server.url(pathAndQuery), to: file(name), options: options)
    }

    package func managerCall(_ method: ManagerMethod, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await calls.call(method, body)
    }

    package func taskCall(_ path: ObjectPath, _ method: TaskMethod) async throws {
        try await calls.call(method, on: path)
    }

    package func property(_ path: ObjectPath, _ property: TaskProperty) async throws -> DBusValue {
        try await calls.property(property, of: path)
    }

    /// Waits until the task reaches `state` (generous: retries take seconds).
    package func wait(_ path: ObjectPath, until state: TaskStateName, timeout: Duration = .seconds(30)) async throws {
        // A task that does not exist yet (a CLI still creating it) is simply not there yet.
        try await waitUntil(
            "\(path) to reach \(state.rawValue)", timeout: timeout,
            seen: { "State \(String(describing: try? await property(path, .state)))" }
        ) {
            (try? await property(path, .state)) == .state(state)
        }
    }

    /// Waits until the task has at least `bytes` on disk.
    package func wait(_ path: ObjectPath, received bytes: UInt64) async throws {
        try await waitUntil("\(path) to receive \(bytes) bytes", timeout: .seconds(30)) {
            ((try? await property(path, .bytesReceived))?.uint64Value ?? 0) >= bytes
        }
    }

    package func errorName(_ path: ObjectPath) async throws -> String {
        try await property(path, .errorName).stringValue ?? "?"
    }

    package func sha256(of name: String) async throws -> String {
        try await TestHTTPServer.sha256(ofFile: folder.appendingPathComponent(name))
    }
}
