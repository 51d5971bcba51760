import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld's notifications in the real headless gnome-shell: GNOME's notification service shows the banner, and its
/// buttons act.
@Suite(.timeLimit(.minutes(5))) struct GnomeShellNotificationTests {
    @Test func aFinishedDownloadShowsABannerNamingTheFileWhoseButtonsAct() async throws {
        let artefacts = try ArtefactFolder("gnome-shell-notification")
        print("GNOME Shell screenshots and log: \(artefacts.url.path)")
        let server = try await TestHTTPServer()
        defer { server.stop() }
        try await GnomeShell.with(artefacts: artefacts) { shell in
            var environment = shell.hauldEnvironment
            environment["HAULD_NOTIFY"] = "1"
            environment["HAULD_LOG_LEVEL"] = "debug"
            let hauld = try await HauldProcess(bus: shell.sessionBus, environment: environment)
            let client = try await DBusConnection.connect(address: shell.sessionBus.address)
            try await waitUntil("GNOME's notification service") {
                try await client.nameHasOwner("org.freedesktop.Notifications")
            }
            try await shell.clearBanners()
            let calls = HauldCalls(client)
            let reply = try await calls.call(
                .download, [.string(server.url("/gen/64k?seed=5")), .string(shell.homeFile("quarterly-report.pdf"))]
            )
            guard case .objectPath(let task)? = reply.first else { throw TestSupportError("Download: \(reply)") }
            try await waitUntil("the download to finish") {
                try await calls.property(.state, of: task) == .state(.completed)
            }
            var banners: GnomeShell.Banners?
            try await hauld.explainingFailure {
                // A banner of the shell's own that came meanwhile goes once the user is active.
                try await waitUntil("the shell to show the banner", timeout: .seconds(60), every: .seconds(1), seen: {
                    "\(String(describing: banners))"
                }) {
                    banners = try await shell.banners()
                    guard let shown = banners?.shown else { return false }
                    if shown.contains("quarterly-report.pdf") { return true }
                    try await shell.nudgePointer()
                    return false
                }
            }
            // Shown, it stays four seconds after the user was last active; what the shell shows is what it draws.
            #expect(banners?.shown == "Download complete: quarterly-report.pdf")
            let screenshot = artefacts.path("banner.png")
            var seen = ""
            let banner = ImageProbe.Rectangle(x: 320, y: 0, width: 640, height: 260)
            try await waitUntil("the banner on the screen", timeout: .seconds(20), every: .seconds(1), seen: { seen }) {
                try await shell.screenshot(screenshot)
                seen = try await ImageProbe.text(in: screenshot, area: banner, lightText: true)
                return seen.contains("quarterly-report.pdf")
            }
            // With the pointer on it, the banner stays and shows its buttons; "Show in folder" opens the download's
            // folder (no file manager on this bus: through xdg-open, in the home's handler of folders).
            try await shell.movePointer(x: banner.x + banner.width / 2, y: 70)
            var button: (x: Int, y: Int)?
            try await waitUntil("the banner's buttons", timeout: .seconds(20), every: .seconds(1)) {
                try await shell.screenshot(screenshot)
                button = try await ImageProbe.locate("Show in folder", in: screenshot, area: banner, lightText: true)
                return button != nil
            }
            let click = try #require(button)
            try await shell.movePointer(x: click.x, y: click.y)
            try await shell.click()
            let home = URL(fileURLWithPath: shell.homeFile("quarterly-report.pdf")).deletingLastPathComponent().path
            try await hauld.explainingFailure {
                try await waitUntil("the download's folder to open", timeout: .seconds(20)) {
                    shell.openedFolder?.contains(home) == true
                }
            }
            await client.close()
            _ = await hauld.stop()
        }
    }
}
