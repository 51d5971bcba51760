import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld shows its transfers to a KDE job view server (a fake one the test exports) and obeys its buttons.
@Suite(.timeLimit(.minutes(2))) struct JobViewBusTests {
    static let mib = 1 << 20

    @Test func aDownloadBecomesAJobWhoseButtonsSuspendResumeAndCancelIt() async throws {
        try await DesktopFixture.with { desktop throws in
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                // 8 MiB at 400 kB/s: surely running throughout the test.
                // The job is the application's that asked (the task's Application).
                let task = try await f.download(
                    "/gen/8m?seed=31&throttle=400000", to: "job.bin",
                    options: [.application: .string("org.example.Asker")]
                )
                let request = try await DesktopFixture.call("requestView", in: kde.log)
                #expect(request.arguments.first == .string("org.example.Asker"))
                #expect(request.arguments.dropFirst().first == .int32(3), "Killable | Suspendable")
                let hints = request.vardict(2)
                #expect(hints["application-display-name"] == .string("Asker"))
                #expect(hints["title"] == .string("Downloading job.bin"))
                #expect(hints["descriptionValue2"] == .string(f.file("job.bin")))
                let view: ObjectPath = "/org/kde/notificationmanager/jobs/JobView_1"

                let progress = try await DesktopFixture.call("update", in: kde.log) { call in
                    ((call.vardict(0)["processedBytes"]?.uint64Value) ?? 0) > 0
                }
                #expect(progress.path == view)
                let totals = await kde.log.calls("update").compactMap { $0.vardict(0)["totalBytes"] }
                #expect(totals.contains(.uint64(UInt64(8 * Self.mib))))
                let percents = await kde.log.calls("update").compactMap { $0.vardict(0)["percent"] }
                #expect(!percents.isEmpty && percents.allSatisfy { $0.uint32Value.map { $0 <= 100 } ?? false })

                try await FakeJobViewServer.press("suspendRequested", on: view, of: kde)
                try await f.wait(task, until: .suspended)
                _ = try await DesktopFixture.call("update", in: kde.log) {
                    $0.vardict(0)["suspended"] == .boolean(true)
                }

                try await FakeJobViewServer.press("resumeRequested", on: view, of: kde)
                try await f.wait(task, until: .running)
                try await waitUntil("an update saying the job is no longer suspended") {
                    await kde.log.calls("update").last { $0.vardict(0)["suspended"] != nil }?.vardict(0)["suspended"]
                        == .boolean(false)
                }

                try await FakeJobViewServer.press("cancelRequested", on: view, of: kde)
                try await f.wait(task, until: .completed)
                #expect(try await f.errorName(task) == HaulErrorName.cancelled.fullName)
                let terminate = try await DesktopFixture.call("terminate", in: kde.log)
                #expect(terminate.path == view)
                #expect(terminate.arguments.first == .uint32(1), "KIO::ERR_USER_CANCELED")
            }
            await kde.close()
        }
    }

    @Test func aCompletedDownloadEndsItsJobWithSuccess() async throws {
        try await DesktopFixture.with { desktop throws in
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                let task = try await f.download("/gen/2m?seed=32&throttle=1000000", to: "done.bin")
                try await f.wait(task, until: .completed)
                let terminate = try await DesktopFixture.call("terminate", in: kde.log)
                #expect(terminate.arguments.prefix(2) == [.uint32(0), .string("")])
                let updates = await kde.log.calls("update").map { $0.vardict(0) }
                #expect(updates.contains { $0["percent"] == .uint32(100) })
                #expect(updates.contains { $0["processedBytes"] == .uint64(UInt64(2 * Self.mib)) })
                // One view, ended once.
                #expect(await kde.log.calls("requestView").count == 1)
                #expect(await kde.log.calls("terminate").count == 1)
            }
            await kde.close()
        }
    }

    /// A transfer that hauld restores at its next start is a job again: the desktop bridge is handed the restored
    /// tasks (they are exported before hauld owns its name, without `InterfacesAdded`) and follows their changes.
    @Test func aRestoredTransferIsAJobAgain() async throws {
        try await DesktopFixture.with { desktop throws in
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                // 80 s unless stopped.
                let task = try await f.download("/gen/32m?seed=34&throttle=400000", to: "again.bin")
                try await f.wait(task, received: 100_000)
                _ = try await DesktopFixture.call("requestView", in: kde.log)
                #expect(await f.daemon.hauld.stop().status == 0)
            }
            try await desktop.withHauld { f throws in
                try await waitUntil("a second requestView", timeout: .seconds(20)) {
                    await kde.log.calls("requestView").count == 2
                }
                let request = await kde.log.calls("requestView")[1]
                #expect(request.vardict(2)["title"] == .string("Downloading again.bin"))
                // Its progress goes on: past what the first run had received.
                _ = try await DesktopFixture.call("update", in: kde.log) { call in
                    call.path == "/org/kde/notificationmanager/jobs/JobView_2"
                        && ((call.vardict(0)["processedBytes"]?.uint64Value) ?? 0) > 100_000
                }
            }
            await kde.close()
        }
    }

    /// A panel that starts after hauld gets the running transfers; one that restarts gets them again; and
    /// stopping hauld ends the views quietly instead of leaving them to look crashed.
    @Test func theViewsFollowTheServerAndEndWhenHauldStops() async throws {
        try await DesktopFixture.with { desktop throws in
            try await desktop.withHauld { f throws in
                // 80 s unless stopped: still running when the second panel comes, however slow the machine.
                let task = try await f.download("/gen/32m?seed=33&throttle=400000", to: "late.bin")
                try await f.wait(task, received: 100_000)

                let first = try await FakeJobViewServer.start(on: desktop.bus)
                let request = try await DesktopFixture.call("requestView", in: first.log)
                #expect(request.vardict(2)["title"] == .string("Downloading late.bin"))
                await first.close()

                let second = try await FakeJobViewServer.start(on: desktop.bus)
                _ = try await DesktopFixture.call("requestView", in: second.log)
                _ = try await DesktopFixture.call("update", in: second.log)

                let stopped = await f.daemon.hauld.stop()
                #expect(stopped.status == 0)
                let terminate = try await DesktopFixture.call("terminate", in: second.log)
                #expect(terminate.arguments.first == .uint32(1), "KIO::ERR_USER_CANCELED: removed quietly")
                #expect(terminate.arguments.dropFirst().first?.stringValue?.contains("hauld stopped") == true)
                await second.close()
            }
        }
    }
}
