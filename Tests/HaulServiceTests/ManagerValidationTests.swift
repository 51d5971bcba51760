import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Manager requests are validated before anything starts, with the contract's error names.
@Suite(.timeLimit(.minutes(2))) struct ManagerValidationTests {
    static let manager = HaulBus.managerInterface

    func call(_ fixture: DaemonFixture, _ method: ManagerMethod, _ body: [DBusValue]) async -> DBusError? {
        await call(fixture, member: method.rawValue, body)
    }

    func call(_ fixture: DaemonFixture, member: String, _ body: [DBusValue]) async -> DBusError? {
        do {
            _ = try await fixture.client.call(
                destination: HaulBus.name, path: HaulBus.managerPath, interface: Self.manager,
                member: member, body
            )
            return nil
        } catch {
            return error as? DBusError
        }
    }

    @Test func urlsAndPathsAreValidated() async throws {
        try await DaemonFixture.with { fixture throws in
            let (download, upload) = (ManagerMethod.download.rawValue, ManagerMethod.upload.rawValue)
            let unsupported = HaulErrorName.unsupportedScheme.fullName
            let invalid = HaulErrorName.invalidArgument.fullName
            let cases: [(String, [DBusValue], String)] = [
                (download, [.string("ftp://127.0.0.1:1/f"), .string("/tmp/f")], unsupported),
                (download, [.string("file:///etc/passwd"), .string("/tmp/f")], unsupported),
                (download, [.string("not a url"), .string("/tmp/f")], invalid),
                (download, [.string("http://127.0.0.1:1/f"), .string("relative")], invalid),
                (upload, [.string("gopher://127.0.0.1:1/"), .string("/tmp/f")], unsupported),
                (download, [.int32(1), .string("/tmp/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
                (download, [.string("http://127.0.0.1:1/f")], "org.freedesktop.DBus.Error.InvalidArgs"),
                ("Frobnicate", [], "org.freedesktop.DBus.Error.UnknownMethod"),
            ]
            for (member, body, expected) in cases {
                let error = await call(fixture, member: member, body)
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
                DownloadOption.values([.overwrite: .string("yes")]),
                DownloadOption.values([.sha256: .string("abc")]),
                DownloadOption.values([.headers: .stringDictionary(["Bad Header": "x"])]),
                DownloadOption.values([.headers: .stringDictionary(["X-A": "a\r\nInjected: 1"])]),
                DownloadOption.values([.maxRetries: .int32(3)]),
            ]
            for options in refused {
                let error = await call(fixture, .downloadWithOptions, [url, path, .vardict(options)])
                #expect(error?.name == HaulErrorName.invalidArgument.fullName, "\(options)")
            }
            let patch = UploadOption.values([.method: .string("PATCH")])
            let badMethod = await call(fixture, .uploadWithOptions, [url, path, .vardict(patch)])
            #expect(badMethod?.name == HaulErrorName.invalidArgument.fullName)
        }
    }

    /// Every option of the contract is accepted. Port 1 of loopback refuses connections, so nothing leaves
    /// this machine; with no retries the task then completes with a Network error.
    @Test func validRequestsCreateTasks() async throws {
        try await DaemonFixture.with { fixture throws in
            let destination = fixture.bus.directory.appendingPathComponent("f").path
            let options: [DownloadOption: DBusValue] = [
                .overwrite: .boolean(true), .sha256: .string(String(repeating: "0", count: 64)),
                .headers: .stringDictionary(["X-Token": "t"]), .startSuspended: .boolean(true), .maxRetries: .uint32(0),
            ]
            let task = try await fixture.calls.download("http://127.0.0.1:1/f", to: destination, options: options)
            let tasks = try await fixture.calls.call(.listTasks)
            #expect(tasks == [.array(.objectPath, [.objectPath(task)])])
            let state = try await fixture.calls.property(.state, of: task)
            #expect(state == .state(.suspended))
            for method in [ManagerMethod.suspendAll, .resumeAll] {
                #expect(await call(fixture, method, []) == nil)
            }
            #expect(await call(fixture, .cancelAll, []) == nil)
            try await waitUntil("the cancelled task to complete") {
                try await fixture.calls.property(.state, of: task) == .state(.completed)
            }
        }
    }
}
