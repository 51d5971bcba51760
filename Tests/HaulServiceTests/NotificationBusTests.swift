import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld tells a notification server (a fake one the test exports) when transfers end, with buttons that act.
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
                #expect(success.arguments[2] == .string("document-save"), "a standard icon: Haul's is not installed")
                #expect(success.arguments[3] == .string("Download complete"))
                #expect(success.arguments[4] == .string("note.bin"))
                #expect(
                    success.arguments[5]
                        == .strings(["default", "Open", "open", "Open", "show-in-folder", "Show in folder"]))
                #expect(success.vardict(6)["category"] == .string("transfer.complete"))

                let missing = try await f.download("/missing?status=404", to: "missing.bin")
                try await f.wait(missing, until: .completed)
                let failure = try await DesktopFixture.call("Notify", in: notifications.log) {
                    $0.arguments[3] == .string("Download failed")
                }
                #expect(failure.arguments[4].stringValue?.hasPrefix("missing.bin: ") == true)
                #expect(failure.arguments[4].stringValue?.contains("404") == true, "\(failure.arguments[4])")
                #expect(failure.arguments[5] == .strings(["retry", "Retry"]))
                #expect(failure.vardict(6)["category"] == .string("transfer.error"))

                // Both shown as KDE jobs too (`--notify` announces them anyway), and announced once each.
                try await waitUntil("both job views to end") { await kde.log.calls("terminate").count == 2 }
                try await waitUntil("both notifications") { await notifications.log.calls("Notify").count == 2 }
            }
            await kde.close()
            await notifications.close()
        }
    }

    @Test(arguments: [(["body", "body-markup"], "a&amp;b&lt;1&gt;.bin"), (["body"], "a&b<1>.bin")])
    func theBodyIsEscapedOnlyForAServerThatReadsMarkup(capabilities: [String], body: String) async throws {
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus, capabilities: capabilities)
            try await desktop.withHauld(["--no-job-view"]) { f throws in
                let task = try await f.download("/gen/10k?seed=53", to: "a&b<1>.bin")
                try await f.wait(task, until: .completed)
                let note = try await DesktopFixture.call("Notify", in: notifications.log)
                #expect(note.arguments[4] == .string(body))
                #expect(note.arguments[5] == .strings([]), "the server lists no actions")
                #expect(await notifications.log.calls("GetCapabilities").count == 1)
            }
            await notifications.close()
        }
    }

    /// By default Plasma's job shows the ending (with "Open" and "Open Containing Folder"): no second popup.
    /// `--no-notify` silences the rest too.
    @Test func byDefaultATransferShownAsAKDEJobIsNotAnnouncedAgain() async throws {
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus)
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                let task = try await f.download("/gen/100k?seed=52", to: "silent.bin")
                try await f.wait(task, until: .completed)
                _ = try await DesktopFixture.call("terminate", in: kde.log)
                await kde.close()
                // Plasma gone: the next transfer has no job, and is announced.
                let next = try await f.download("/gen/10k?seed=54", to: "announced.bin")
                try await f.wait(next, until: .completed)
                let note = try await DesktopFixture.call("Notify", in: notifications.log)
                #expect(note.arguments[4] == .string("announced.bin"))
                #expect(await notifications.log.calls("Notify").count == 1)
            }
            try await desktop.withHauld(["--no-notify"]) { f throws in
                let task = try await f.download("/gen/10k?seed=55", to: "quiet.bin")
                try await f.wait(task, until: .completed)
                try await Task.sleep(for: .milliseconds(300))
                #expect(await notifications.log.calls("Notify").count == 1, "nothing more")
            }
            await notifications.close()
        }
    }

    /// "Open" hands the file to `xdg-open`; "Show in folder" asks the file manager to select it, and without one
    /// opens the folder.
    @Test func theButtonsOpenTheFileAndShowItInItsFolder() async throws {
        let xdgOpen = try await FakeXdgOpen()
        defer { xdgOpen.remove() }
        try await DesktopFixture.with { desktop throws in
            let notifications = try await FakeNotifications.start(on: desktop.bus)
            try await desktop.withHauld(["--no-job-view"], environment: xdgOpen.environment) { f throws in
                let task = try await f.download("/gen/10k?seed=56", to: "shown file.bin")
                try await f.wait(task, until: .completed)
                let file = f.folder.appendingPathComponent("shown file.bin").path
                _ = try await DesktopFixture.call("Notify", in: notifications.log)

                try await FakeNotifications.press("open", on: 1, of: notifications)
                try await waitUntil("xdg-open to open the file") { xdgOpen.opened == [file] }

                let fileManager = try await FakeFileManager.start(on: desktop.bus)
                // The press above closed notification 1; the second transfer's is 2.
                let second = try await f.download("/gen/10k?seed=57", to: "second.bin")
                try await f.wait(second, until: .completed)
                _ = try await DesktopFixture.call("Notify", in: notifications.log) {
                    $0.arguments[4] == .string("second.bin")
                }
                try await FakeNotifications.press("show-in-folder", on: 2, of: notifications)
                let shown = try await DesktopFixture.call("ShowItems", in: fileManager.log)
                let uri = f.folder.appendingPathComponent("second.bin").absoluteString
                #expect(shown.arguments == [.strings([uri]), .string("")])
                await fileManager.close()

                let third = try await f.download("/gen/10k?seed=58", to: "third.bin")
                try await f.wait(third, until: .completed)
                _ = try await DesktopFixture.call("Notify", in: notifications.log) {
                    $0.arguments[4] == .string("third.bin")
                }
                try await FakeNotifications.press("show-in-folder", on: 3, of: notifications)
                try await waitUntil("xdg-open to open the folder") { xdgOpen.opened.count == 2 }
                #expect(xdgOpen.opened.last == f.folder.path)
                // Notification 1 is closed: its button does nothing any more.
                try await FakeNotifications.press("open", on: 1, of: notifications)
                try await Task.sleep(for: .milliseconds(300))
                #expect(xdgOpen.opened.count == 2)
            }
            await notifications.close()
        }
    }
}
