import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld's notifications in the real headless gnome-shell: GNOME's notification service shows the banner.
@Suite(.timeLimit(.minutes(5))) struct GnomeShellNotificationTests {
    @Test func aFinishedDownloadShowsABannerNamingTheFile() async throws {
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
            let reply = try await client.call(
                destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
                member: ManagerMethod.download.rawValue,
                [.string(server.url("/gen/64k?seed=5")), .string(shell.homeFile("quarterly-report.pdf"))]
            )
            guard case .objectPath(let task)? = reply.first else { throw TestSupportError("Download: \(reply)") }
            try await waitUntil("the download to finish") {
                try await client.property(
                    destination: HaulBus.name, path: task, interface: HaulBus.taskInterface,
                    name: TaskProperty.state.name
                ) == .state(.completed)
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
            try await waitUntil("the banner on the screen", timeout: .seconds(20), every: .seconds(1), seen: { seen }) {
                try await shell.screenshot(screenshot)
                seen = try await ImageProbe.text(in: screenshot, area: .init(x: 320, y: 0, width: 640, height: 200))
                return seen.contains("quarterly-report.pdf")
            }
            await client.close()
            _ = await hauld.stop()
        }
    }
}
