package import DBusKit
package import Foundation
package import HaulContract

/// hauld on a private bus plus the test HTTP server, with helpers to start and follow transfers.
package struct TransferFixture {
    package let daemon: DaemonFixture
    package let server: TestHTTPServer
    /// A fresh folder for downloads.
    package let folder: URL

    package static let manager = HaulBus.managerInterface
    package static let task = HaulBus.taskInterface

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

    package func download(
        _ pathAndQuery: String, to name: String, options: [DownloadOption: DBusValue] = [:]
    ) async throws -> ObjectPath {
        let reply = try await managerCall(
            .downloadWithOptions, [.string(server.url(pathAndQuery)), .string(file(name)), .vardict(options.byName)]
        )
        guard let path = reply.first?.objectPathValue else {
            throw TestSupportError("\(ManagerMethod.downloadWithOptions.rawValue) answered \(reply)")
        }
        return path
    }

    package func managerCall(_ method: ManagerMethod, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager,
            member: method.rawValue, body
        )
    }

    package func taskCall(_ path: ObjectPath, _ method: TaskMethod) async throws {
        _ = try await client.call(
            destination: DaemonFixture.name, path: path, interface: Self.task, member: method.rawValue
        )
    }

    package func property(_ path: ObjectPath, _ property: TaskProperty) async throws -> DBusValue {
        try await client.property(
            destination: DaemonFixture.name, path: path, interface: Self.task, name: property.name
        )
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
