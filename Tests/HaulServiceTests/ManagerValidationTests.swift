import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// Manager requests are validated before anything starts, with the contract's error names.
@Suite(.timeLimit(.minutes(2))) struct ManagerValidationTests {
    static let manager = "org.haul.Haul1.Manager"

    func call(_ fixture: DaemonFixture, _ member: String, _ body: [DBusValue]) async -> DBusError? {
        do {
            _ = try await fixture.client.call(
                destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager,
                member: member, body
            )
            return nil
        } catch {
            return error as? DBusError
        }
    }

    @Test func urlsAndPathsAreValidated() async throws {
        try await DaemonFixture.with { fixture throws in
            let cases: [(String, [DBusValue], String)] = [
                ("Download", [.string("ftp://127.0.0.1:1/f"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.string("file:///etc/passwd"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.string("not a url"), .string("/tmp/f")], "org.haul.Haul1.Error.InvalidArgument"),
                ("Download", [.string("http://127.0.0.1:1/f"), .string("relative")], "org.haul.Haul1.Error.InvalidArgument"),
                ("Upload", [.string("gopher://127.0.0.1:1/"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.int32(1), .string("/tmp/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
                ("Download", [.string("http://127.0.0.1:1/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
                ("Frobnicate", [], "org.freedesktop.DBus.Error.UnknownMethod"),
            ]
            for (member, body, expected) in cases {
                let error = await call(fixture, member, body)
                #expect(error?.name == expected, "\(member)\(body)")
            }
        }
    }

    @Test func optionsAreStrict() async throws {
        try await DaemonFixture.with { fixture throws in
            let url = DBusValue.string("https://127.0.0.1:1/f")
            let path = DBusValue.string("/tmp/haul-test-file")
            let refused: [[String: DBusValue]] = [
                ["colour": .string("blue")],
                ["overwrite": .string("yes")],
                ["sha256": .string("abc")],
                ["headers": .stringDictionary(["Bad Header": "x"])],
                ["headers": .stringDictionary(["X-A": "a\r\nInjected: 1"])],
                ["max-retries": .int32(3)],
            ]
            for options in refused {
                let error = await call(fixture, "DownloadWithOptions", [url, path, .vardict(options)])
                #expect(error?.name == "org.haul.Haul1.Error.InvalidArgument", "\(options)")
            }
            let badMethod = await call(fixture, "UploadWithOptions", [url, path, .vardict(["method": .string("PATCH")])])
            #expect(badMethod?.name == "org.haul.Haul1.Error.InvalidArgument")
        }
    }

    /// Every option of the contract is accepted. Port 1 of loopback refuses connections, so nothing leaves
    /// this machine; with no retries the task then completes with a Network error.
    @Test func validRequestsCreateTasks() async throws {
        try await DaemonFixture.with { fixture throws in
            let destination = fixture.bus.directory.appendingPathComponent("f").path
            let options: [String: DBusValue] = [
                "overwrite": .boolean(true), "sha256": .string(String(repeating: "0", count: 64)),
                "headers": .stringDictionary(["X-Token": "t"]), "start-suspended": .boolean(true),
                "max-retries": .uint32(0),
            ]
            let reply = try await fixture.client.call(
                destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager,
                member: "DownloadWithOptions", [.string("http://127.0.0.1:1/f"), .string(destination), .vardict(options)]
            )
            let task = try #require(reply.first?.objectPathValue)
            let tasks = try await fixture.client.call(
                destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager, member: "ListTasks"
            )
            #expect(tasks == [.array(.objectPath, [.objectPath(task)])])
            let state = try await fixture.client.property(
                destination: DaemonFixture.name, path: task, interface: "org.haul.Haul1.Task", name: "State"
            )
            #expect(state == .string("suspended"))
            for member in ["SuspendAll", "ResumeAll"] {
                #expect(await call(fixture, member, []) == nil)
            }
            #expect(await call(fixture, "CancelAll", []) == nil)
            try await waitUntil("the cancelled task to complete") {
                try await fixture.client.property(
                    destination: DaemonFixture.name, path: task, interface: "org.haul.Haul1.Task", name: "State"
                ) == .string("completed")
            }
        }
    }
}
