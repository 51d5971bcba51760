import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTransfer
import Testing
@testable import HaulService

/// `SetURL`: a new link for a suspended or queued task, keeping what it knows of its bytes; refused while it
/// transfers or once it has completed.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceSetURLTests {
    static func setURL(_ harness: TaskServiceHarness, _ path: ObjectPath, _ url: String) async throws {
        _ = try await harness.bus.call(
            path: path, interface: HaulBus.taskInterface, member: TaskMethod.setURL.rawValue, [.string(url)]
        )
    }

    static func errorName(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error.name
        } catch {
            return "\(error)"
        }
    }

    @Test func aSuspendedTaskContinuesFromTheNewURLWithItsValidator() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, id) = try await harness.download("expiring.bin")
            let first = await harness.attempts.next()
            await first.head(headers: [("ETag", "\"v1\"")], expectedTotal: 1000)
            // Transferring: refused.
            let refused = await Self.errorName { try await Self.setURL(harness, path, "http://127.0.0.1:1/new") }
            #expect(refused == HaulErrorName.taskNotSuspended.fullName)
            try await harness.tasks.run(.suspend, on: id)
            try await Self.setURL(harness, path, "http://127.0.0.1:1/renewed?token=2")
            let url = try harness.bus.property(
                path: path, interface: HaulBus.taskInterface, name: TaskProperty.url.name
            )
            #expect(url == .string("http://127.0.0.1:1/renewed?token=2"))
            let invalid = await Self.errorName { try await Self.setURL(harness, path, "gopher://127.0.0.1/") }
            #expect(invalid == HaulErrorName.unsupportedScheme.fullName)
            try await harness.tasks.run(.resume, on: id)
            let second = await harness.attempts.next()
            #expect(second.record.url == "http://127.0.0.1:1/renewed?token=2")
            #expect(second.record.validator?.etag == "\"v1\"", "If-Range validates the bytes kept")
            #expect((await harness.savedRecords())[id]?.url == "http://127.0.0.1:1/renewed?token=2")
            second.finish(.downloaded(size: 1000))
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
            let completed = await Self.errorName { try await Self.setURL(harness, path, "http://127.0.0.1:1/late") }
            #expect(completed == HaulErrorName.taskCompleted.fullName)
        }
    }

    @Test func aURLThatDropsItsPasswordLeavesNoCopyOfItOnDisk() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.startSuspended = true
            let path = try await harness.tasks.download(
                url: try TransferURL("http://user:hunter2@127.0.0.1:1/secret.bin"),
                destination: .file(try LocalPath(harness.file("secret.bin"))), options: options
            )
            try await harness.tasks.run(.resume, on: try #require(HaulBus.taskID(of: path)))
            try await harness.tasks.run(.suspend, on: try #require(HaulBus.taskID(of: path)))
            try await Self.setURL(harness, path, "http://127.0.0.1:1/public.bin")
            #expect((await harness.savedRecords()).values.map(\.url) == ["http://127.0.0.1:1/public.bin"])
            // The record and its spare, which held the version before.
            let folder = harness.state.appendingPathComponent("tasks")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(names.count == 2, "\(names)")
            for name in names {
                let contents = try Data(contentsOf: folder.appendingPathComponent(name))
                #expect(!String(decoding: contents, as: UTF8.self).contains("hunter2"), "\(name)")
            }
        }
    }

    @Test func aQueuedTaskTakesANewURL() async throws {
        try await TaskServiceHarness.with { harness throws in
            try await harness.bus.setProperty(
                path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                name: ManagerProperty.maxRunningTasks.name, value: .uint32(1)
            )
            _ = try await harness.download("running.bin")
            let first = await harness.attempts.next()
            let (path, _) = try await harness.download("queued.bin")
            try await Self.setURL(harness, path, "http://127.0.0.1:1/moved")
            first.finish(.downloaded(size: 0))
            let second = await harness.attempts.next()
            #expect(second.record.url == "http://127.0.0.1:1/moved")
            second.finish(.downloaded(size: 0))
        }
    }
}
