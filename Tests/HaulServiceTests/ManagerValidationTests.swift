import DBusKit
import HaulTestSupport
import Testing

/// Manager requests are validated before anything starts, with the contract's error names.
@Suite struct ManagerValidationTests {
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
                ("Download", [.string("ftp://example.test/f"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.string("file:///etc/passwd"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.string("not a url"), .string("/tmp/f")], "org.haul.Haul1.Error.InvalidArgument"),
                ("Download", [.string("http://example.test/f"), .string("relative")], "org.haul.Haul1.Error.InvalidArgument"),
                ("Upload", [.string("gopher://example.test/"), .string("/tmp/f")], "org.haul.Haul1.Error.UnsupportedScheme"),
                ("Download", [.int32(1), .string("/tmp/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
                ("Download", [.string("http://example.test/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
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
            let url = DBusValue.string("https://example.test/f")
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

    @Test func validRequestsAreAnsweredNotSupportedUntilTransfersExist() async throws {
        try await DaemonFixture.with { fixture throws in
            let options: [String: DBusValue] = [
                "overwrite": .boolean(true), "sha256": .string(String(repeating: "0", count: 64)),
                "headers": .stringDictionary(["X-Token": "t"]), "start-suspended": .boolean(true),
                "max-retries": .uint32(2),
            ]
            let download = await call(
                fixture, "DownloadWithOptions", [.string("https://example.test/f"), .string("/tmp/f"), .vardict(options)]
            )
            #expect(download?.name == "org.freedesktop.DBus.Error.NotSupported")
            let tasks = try await fixture.client.call(
                destination: DaemonFixture.name, path: DaemonFixture.manager, interface: Self.manager, member: "ListTasks"
            )
            #expect(tasks == [.array(.objectPath, [])])
            for member in ["SuspendAll", "ResumeAll", "CancelAll"] {
                #expect(await call(fixture, member, []) == nil)
            }
        }
    }
}
