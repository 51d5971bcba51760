import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// What hauld reads from its state folder is outside input too: damaged or hostile files cost what they hold,
/// never hauld itself.
@Suite(.timeLimit(.minutes(2))) struct HostileDiskTests {
    /// A state folder (`XDG_STATE_HOME`) holding `files` below `haul/`.
    static func stateFolder(_ files: [String: String]) throws -> URL {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-state-\(UUID().uuidString)")
        for (name, contents) in files {
            let file = state.appendingPathComponent("haul/" + name)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            try Data(contents.utf8).write(to: file)
        }
        return state
    }

    static func record(_ id: UInt64, _ extra: String = "") -> String {
        #"{"id": \#(id), "kind": "download", "url": "http://127.0.0.1:1/", "path": "/tmp/haul-\#(id)", "#
            + #""state": "completed", "outcome": {"success": {}}, "createdAt": 0\#(extra)}"#
    }

    func suspendedDownload(_ fixture: DaemonFixture, _ name: String) async throws -> ObjectPath {
        try await fixture.calls.download(
            "http://127.0.0.1:1/", to: fixture.bus.directory.appendingPathComponent(name).path,
            options: [.startSuspended: .boolean(true)]
        )
    }

    /// After a record named for the second-to-last id, the next task takes the last one and the ones after it start
    /// again from the lowest free id (hauld used to trap on the overflow).
    @Test func idsPastTheLastOneStartAgainFromTheLowestFree() async throws {
        let state = try Self.stateFolder([
            "tasks/4294967294.json": Self.record(4_294_967_294), "tasks/1.json": Self.record(1),
        ])
        defer { try? FileManager.default.removeItem(at: state) }
        try await DaemonFixture.with(stateDirectory: state) { fixture throws in
            var created: [ObjectPath] = []
            for name in ["a", "b", "c"] { created.append(try await suspendedDownload(fixture, name)) }
            #expect(created == [HaulBus.taskPath(4_294_967_295), HaulBus.taskPath(2), HaulBus.taskPath(3)])
            let listed = try await fixture.calls.call(.listTasks)
            #expect(listed.first?.arrayValue?.count == 5)
        }
    }

    /// Strings from a record: a NUL, which no D-Bus string can carry, is shown as U+FFFD (loaded as it was, one such
    /// task made GetManagedObjects fail for every task); a line break in the validator sent back in If-Range, which
    /// would inject a header, makes the record corrupt.
    @Test func recordStringsAreShownAsTheBusCanCarryThem() async throws {
        let failed = #", "outcome": {"failure": {"_0": {"kind": "HTTP", "message": "a\u0000b", "isTransient": false}}}"#
        let suspended = #""state": "suspended", "notice": "a\u0000b""#
        let state = try Self.stateFolder([
            "tasks/1.json": Self.record(1).replacingOccurrences(of: "127.0.0.1:1/", with: #"127.0.0.1:1/a\u0000b"#),
            "tasks/2.json": Self.record(2).replacingOccurrences(
                of: #""state": "completed", "outcome": {"success": {}}"#, with: suspended),
            "tasks/3.json": Self.record(3).replacingOccurrences(of: #", "outcome": {"success": {}}"#, with: failed),
            "tasks/4.json": Self.record(4, #", "validator": {"etag": "\"v\"\r\nInjected: 1"}"#),
            "tasks/5.json": Self.record(5, #", "validator": {"lastModified": "Wed\u0000"}"#),
        ])
        defer { try? FileManager.default.removeItem(at: state) }
        try await DaemonFixture.with(stateDirectory: state) { fixture throws in
            let entries = try await fixture.calls.managedObjects()
            let tasks = entries.compactMap(\.key.objectPathValue).filter { HaulBus.taskID(of: $0) != nil }
            #expect(tasks.sorted() == (1...3).map(HaulBus.taskPath))
            func property(_ id: UInt32, _ property: TaskProperty) async throws -> String {
                try await fixture.calls.property(property, of: HaulBus.taskPath(id)).stringValue ?? ""
            }
            #expect(try await property(1, .url) == "http://127.0.0.1:1/a\u{FFFD}b")
            #expect(try await property(2, .errorMessage) == "a\u{FFFD}b")
            #expect(try await property(3, .errorMessage) == "a\u{FFFD}b")
        }
    }

    /// Garbage, absurd numbers and deep nesting in the task records and the indicator settings: hauld starts, keeps
    /// the good record and the default settings, and answers.
    @Test func damagedStateFilesCostOnlyThemselves() async throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let state = try Self.stateFolder([
            "tasks/1.json": Self.record(1),
            "tasks/2.json": deep,
            "tasks/3.json": Self.record(3, #", "expectedTotal": 1e300"#),
            "tasks/4.json": Self.record(4, #", "httpStatus": 99999999999"#),
            "tasks/5.json": Self.record(6),
            "tasks/6.json": Self.record(6, #", "interruptedRuns": -1"#),
            "tasks/7.json": String(repeating: "\u{0}", count: 1000),
            "tasks/removed-id": "99999999999999999999\n",
            "indicator.json": #"{"enabled": false, "activationDelay": 1e999, "completionDelay": -0.0}"#,
        ])
        defer { try? FileManager.default.removeItem(at: state) }
        try await DaemonFixture.with(stateDirectory: state) { fixture throws in
            let listed = try await fixture.calls.call(.listTasks)
            #expect(listed == [.array(.objectPath, [.objectPath(HaulBus.taskPath(1))])])
            #expect(try await fixture.indicatorProperty(.activationDelay) == .double(1.0), "the defaults")
            #expect(try await suspendedDownload(fixture, "new") == HaulBus.taskPath(8), "after every file's id")
        }
    }
}
