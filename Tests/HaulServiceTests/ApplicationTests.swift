import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// A task's `Application`, end to end: from the calling process's systemd app unit (a cgroup the test makes and runs
/// the CLI in), else its executable's name, or what an unsandboxed caller says; kept across a restart, shown by
/// `haul ls` and `haul watch`.
@Suite(.timeLimit(.minutes(3))) struct ApplicationTests {
    /// Runs `haul` with `arguments` inside a cgroup named `unit`.
    static func haul(_ f: TransferFixture, in unit: String, _ arguments: [String]) async throws -> CommandResult {
        let cgroup = try TestCgroup(unit: unit)
        defer { cgroup.remove() }
        let launcher = cgroup.launcher
        return try await Command.run(
            launcher[0], Array(launcher.dropFirst()) + [Command.built("haul")] + arguments,
            environment: f.daemon.bus.environment
        )
    }

    @Test(arguments: [
        ("app-gnome-firefox-1234.scope", "firefox"),
        ("app-org.kde.dolphin@5f2c9a.service", "org.kde.dolphin"),
        ("app-flatpak-org.mozilla.firefox-77.scope", "org.mozilla.firefox"),
        ("a-plain.scope", "haul"),
        ("app-gnome-bad\\x2fid-1.scope", "haul"),
    ])
    func theCallersAppUnitNamesIt(_ unit: String, _ expected: String) async throws {
        try await TransferFixture.with { f throws in
            let result = try await Self.haul(
                f, in: unit, ["get", f.server.url("/gen/10"), "-o", f.folder.path + "/", "--detach"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let task = HaulBus.taskPath(1)
            #expect(try await f.property(task, .application) == .string(expected))
            try await f.wait(task, until: .completed)
            let listed = try await Command.run(Command.built("haul"), ["ls"], environment: f.daemon.bus.environment)
            #expect(listed.stdout.contains("(\(expected))"), "\(listed.stdout)")
            let json = try await Command.run(
                Command.built("haul"), ["ls", "--json"], environment: f.daemon.bus.environment
            )
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["application"] as? String == expected)
            let watched = try await Command.run(
                Command.built("haul"), ["watch", "1"], environment: f.daemon.bus.environment
            )
            #expect(watched.stdout.contains("(\(expected))"), "\(watched.stdout)")
        }
    }

    /// An unsandboxed caller may say whom it acts for (a browser's native host names the browser); what it says must
    /// be a name hauld can show. Uploads have an `Application` too.
    @Test func anUnsandboxedCallerNamesItself() async throws {
        try await TransferFixture.with { f throws in
            let claimed = try await f.download(
                "/gen/10?id=1", to: "a.bin", options: [.application: .string("chromium")]
            )
            #expect(try await f.property(claimed, .application) == .string("chromium"))
            let plain = try await f.download("/gen/10?id=2", to: "b.bin")
            let own = try #require(try await f.property(plain, .application).stringValue)
            #expect(!own.isEmpty && own != "chromium")
            try Data("up".utf8).write(to: f.folder.appendingPathComponent("up.txt"))
            let upload = try #require(
                try await f.managerCall(.upload, [.string(f.server.url("/upload/up.txt")), .string(f.file("up.txt"))])
                    .first?.objectPathValue
            )
            #expect(try await f.property(upload, .application) == .string(own))
            for bad in ["", "two words", "a/b", String(repeating: "x", count: 256)] {
                await #expect(throws: DBusError.self) {
                    _ = try await f.download("/gen/10?id=3", to: "c.bin", options: [.application: .string(bad)])
                }
            }
        }
    }

    /// A sandboxed caller is its Flatpak app, whatever it claims (`gdbus` in a fake sandbox: a chroot with
    /// `/.flatpak-info`).
    @Test func aSandboxedCallerIsItsAppWhateverItClaims() async throws {
        try await TransferFixture.with { f throws in
            let sandbox = try FakeFlatpak(appID: "org.example.Sandboxed")
            defer { sandbox.remove() }
            let launcher = sandbox.launcher
            let method = "\(HaulBus.managerInterface).\(ManagerMethod.downloadWithOptions.rawValue)"
            let call = [
                "/usr/bin/gdbus", "call", "-e", "-d", HaulBus.name, "-o", HaulBus.managerPath.rawValue, "-m", method,
                f.server.url("/gen/10"), f.folder.path, "{'\(DownloadOption.application.rawValue)': <'org.example.Liar'>}",
            ]
            let result = try await Command.run(
                launcher[0], Array(launcher.dropFirst()) + call, environment: f.daemon.bus.environment
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try await f.property(HaulBus.taskPath(1), .application) == .string("org.example.Sandboxed"))
        }
    }

    /// The record keeps it: a restarted hauld shows the same `Application`.
    @Test func itIsKeptAcrossARestart() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = bus.directory.appendingPathComponent("state")
        let client = try await DBusConnection.connect(address: bus.address)
        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        let hauld = HauldCalls(client)
        let task = try await hauld.download(
            server.url("/gen/10"), to: bus.directory.path,
            options: [.application: .string("org.example.Kept"), .startSuspended: .boolean(true)]
        )
        _ = await first.stop()
        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        let application = try await hauld.property(.application, of: task)
        #expect(application == .string("org.example.Kept"))
        _ = await second.stop()
        await client.close()
    }
}
