import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// With `--notify`, hauld tells a notification server (a fake one the test exports) when transfers end.
@Suite(.timeLimit(.minutes(2))) struct NotificationBusTests {
    @Test func withNotifyEachFinishedTransferIsAnnouncedOnce() async throws {
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus)
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld(["--notify"]) { f throws in
                let done = try await f.download(
                    "/gen/1m?seed=51&throttle=1000000", to: "note.bin",
                    options: [.application: .string("org.example.Asker")]
                )
                try await f.wait(done, until: .completed)
                let success = try await DesktopFixture.call("Notify", in: notifications.log)
                #expect(success.arguments[0] == .string("Asker"), "the application that asked")
                #expect(success.arguments[3] == .string("Download complete"))
                #expect(success.arguments[4] == .string("note.bin"))
                #expect(success.vardict(6)["category"] == .string("transfer.complete"))

                let missing = try await f.download("/missing?status=404", to: "missing.bin")
                try await f.wait(missing, until: .completed)
                let failure = try await DesktopFixture.call("Notify", in: notifications.log) {
                    $0.arguments[3] == .string("Download failed")
                }
                #expect(failure.arguments[4].stringValue?.hasPrefix("missing.bin: ") == true)
                #expect(failure.arguments[4].stringValue?.contains("404") == true, "\(failure.arguments[4])")
                #expect(failure.vardict(6)["category"] == .string("transfer.error"))

                // Each notification leaves before its job view ends: after both ends, there were exactly two.
                try await waitUntil("both job views to end") { await kde.log.calls("terminate").count == 2 }
                #expect(await notifications.log.calls("Notify").count == 2)
            }
            await kde.close()
            await notifications.close()
        }
    }

    @Test(arguments: [(["body", "body-markup"], "a&amp;b&lt;1&gt;.bin"), (["body"], "a&b<1>.bin")])
    func theBodyIsEscapedOnlyForAServerThatReadsMarkup(capabilities: [String], body: String) async throws {
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus, capabilities: capabilities)
            try await desktop.withHauld(["--notify", "--no-job-view"]) { f throws in
                let task = try await f.download("/gen/10k?seed=53", to: "a&b<1>.bin")
                try await f.wait(task, until: .completed)
                let note = try await DesktopFixture.call("Notify", in: notifications.log)
                #expect(note.arguments[4] == .string(body))
                #expect(await notifications.log.calls("GetCapabilities").count == 1)
            }
            await notifications.close()
        }
    }

    @Test func withoutNotifyNothingIsAnnounced() async throws {
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus)
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                let task = try await f.download("/gen/100k?seed=52", to: "silent.bin")
                try await f.wait(task, until: .completed)
                _ = try await DesktopFixture.call("terminate", in: kde.log)
                #expect(await notifications.log.calls.isEmpty)
            }
            await kde.close()
            await notifications.close()
        }
    }
}
