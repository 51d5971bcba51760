import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// A private bus on which the test plays the desktop (fake job view server, tray watcher, notification server,
/// started before or after hauld), plus the test HTTP server.
struct DesktopFixture {
    let bus: PrivateBus
    let server: TestHTTPServer

    static func with(_ body: (DesktopFixture) async throws -> Void) async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        try await body(DesktopFixture(bus: bus, server: server))
    }

    /// Runs `body` with hauld started with `arguments` and `environment` added to its own, stopping hauld afterwards
    /// unless `body` did.
    func withHauld(
        _ arguments: [String] = [], environment: [String: String] = [:], _ body: (TransferFixture) async throws -> Void
    ) async throws {
        let hauld = try await HauldProcess(bus: bus, arguments: arguments, environment: environment)
        let client = try await DBusConnection.connect(address: bus.address)
        let folder = bus.directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let daemon = DaemonFixture(bus: bus, hauld: hauld, client: client)
        try await body(TransferFixture(daemon: daemon, server: server, folder: folder))
        await client.close()
        if hauld.running.isRunning { _ = await hauld.stop() }
    }

    /// Waits until `log` holds a call for which `condition` holds, and returns the first such call.
    static func call(
        _ member: String, in log: CallLog, timeout: Duration = .seconds(20),
        where condition: @Sendable (RecordedCall) -> Bool = { _ in true }
    ) async throws -> RecordedCall {
        var found: RecordedCall?
        let members = { "received \(await log.calls.map(\.member))" }
        try await waitUntil("a \(member) call as expected", timeout: timeout, seen: members) {
            found = await log.calls(member).first(where: condition)
            return found != nil
        }
        guard let found else { throw TestSupportError("no \(member) call") }
        return found
    }
}
