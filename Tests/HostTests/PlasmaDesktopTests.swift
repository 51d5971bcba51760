import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld in a real, headless Plasma 5.27 (``PlasmaSession``), looked at in screenshots (pixels, and tesseract's
/// reading) kept in the artefact folder the test prints: its transfer is a job in plasmashell with the name, the
/// application and the percent, the job's Pause, Resume and Stop buttons (clicked with xdotool) suspend, resume and
/// cancel the task, Haul's busy icon is drawn in the system tray and its menu acts, a queued job says why it waits,
/// jobs end as finished or failed, and a finished download is a notification whose buttons act.
@Suite(.serialized, .timeLimit(.minutes(6))) struct PlasmaDesktopTests {
    /// Where Plasma 5.27 draws on a 1280×800 screen: the newest popup (a job) sits above the panel
    /// at the right, a job's Pause (Resume) and Stop buttons right of its progress bar; the tray's icons left of
    /// the clock.
    static let pauseButton = (x: 1162, y: 700)
    static let stopButton = (x: 1192, y: 700)
    static let popup = ImageProbe.Rectangle(x: 908, y: 560, width: 336, height: 170)
    static let tray = ImageProbe.Rectangle(x: 1000, y: 762, width: 110, height: 32)
    /// The popups' column, where two jobs or more stack up.
    static let popups = ImageProbe.Rectangle(x: 880, y: 200, width: 400, height: 556)

    @Test func aTransferIsAJobWhoseButtonsActAndTheTrayShowsHaulBusy() async throws {
        try await Self.inPlasma("plasma-job") { session, server, artefacts in
            let hauld = try await HauldProcess(bus: session.bus)
            let client = try await DBusConnection.connect(address: session.bus.address)
            let task = try await Self.download(
                server.url("/gen/64m?seed=61&throttle=200000"), to: artefacts.path("plasma-job.bin"), with: client
            )
            var shots = Screenshots(session: session, artefacts: artefacts)

            var seen = ""
            try await waitUntil("the job in plasmashell", timeout: .seconds(90), every: .seconds(1), seen: { seen }) {
                seen = try await ImageProbe.text(in: try await shots.take("job"), area: Self.popup)
                // The application is the one that asked: this test's process, as hauld read it from /proc.
                return seen.contains("Downloading plasma-job.bin") && seen.contains("HaulPackageTest")
                    && seen.contains("%")
            }
            // Haul's busy icon in the tray: its orange among the panel's greys.
            var orange = 0
            try await waitUntil("Haul's busy icon in the tray", timeout: .seconds(30), every: .seconds(1)) {
                orange = try await Self.orangePixels(in: try await shots.take("tray"), area: Self.tray)
                return orange >= 40
            }

            try await session.click(x: Self.pauseButton.x, y: Self.pauseButton.y)
            try await Self.wait(for: task, toBe: .suspended, after: "Pause", with: client)
            _ = try await shots.take("paused")
            try await session.click(x: Self.pauseButton.x, y: Self.pauseButton.y)
            try await Self.wait(for: task, toBe: .running, after: "Resume", with: client)
            try await session.click(x: Self.stopButton.x, y: Self.stopButton.y)
            try await Self.wait(for: task, toBe: .completed, after: "Stop", with: client)
            let error = try await HauldCalls(client).property(.errorName, of: task)
            #expect(error == .string(HaulErrorName.cancelled.fullName))
            _ = try await shots.take("stopped")
            await client.close()
            #expect(await hauld.stop().status == 0)
        }
    }

    /// Two transfers and one slot: the queued one's job says why it waits; Haul's tray icon, right-clicked, shows
    /// its menu (com.canonical.dbusmenu, drawn by Plasma), whose "Suspend all" and "Resume all" act on both; and
    /// jobs end as their transfers did: a failed one with its error, a finished one as finished.
    @Test func aQueuedJobSaysWhyItWaitsTheTrayMenuActsAndJobsEndAsTheirTransfers() async throws {
        try await Self.inPlasma("plasma-queue") { session, server, artefacts in
            let hauld = try await HauldProcess(bus: session.bus)
            let client = try await DBusConnection.connect(address: session.bus.address)
            let calls = HauldCalls(client)
            try await calls.set(.maxRunningTasks, to: .uint32(1))
            let first = try await Self.download(
                server.url("/gen/64m?seed=63&throttle=200000"), to: artefacts.path("first.bin"), with: client
            )
            let second = try await Self.download(
                server.url("/gen/64m?seed=64&throttle=200000"), to: artefacts.path("second.bin"), with: client
            )
            var shots = Screenshots(session: session, artefacts: artefacts)
            var seen = ""
            try await waitUntil("the queued job's reason", timeout: .seconds(90), every: .seconds(1), seen: { seen }) {
                seen = try await ImageProbe.text(in: try await shots.take("queued"), area: Self.popups)
                return seen.contains("Downloading second.bin") && seen.contains("Waiting for other transfers to finish")
            }

            try await Self.chooseFromTrayMenu("Suspend all", shots: &shots, session: session)
            try await Self.wait(for: first, toBe: .suspended, after: "Suspend all", with: client)
            try await Self.wait(for: second, toBe: .suspended, after: "Suspend all", with: client)
            // Nothing runs now: the icon goes passive, and Plasma hides it. The first transfer, resumed over the bus,
            // brings it back; the menu's Resume all resumes the second, in a slot of its own.
            try await calls.set(.maxRunningTasks, to: .uint32(4))
            try await calls.call(.resume, on: first)
            try await Self.chooseFromTrayMenu("Resume all", shots: &shots, session: session)
            try await Self.wait(for: second, toBe: .running, after: "Resume all", with: client)
            try await calls.call(.cancelAll)

            // Each ending is read while it shows: Plasma takes a popup away after some seconds, unless the pointer
            // is on it. The failure comes after a second, so that the job is there before it ends.
            try await session.movePointer(x: Self.popup.x + Self.popup.width / 2, y: Self.popup.y + 90)
            let failed = try await Self.download(
                server.url("/missing?status=404&delay=1"), to: artefacts.path("missing.bin"), with: client
            )
            try await waitUntil("the failed job", timeout: .seconds(60), every: .milliseconds(500), seen: { seen }) {
                seen = try await ImageProbe.text(in: try await shots.take("failed"), area: Self.popups)
                return seen.contains("missing.bin") && seen.contains("404")
            }
            try await Self.wait(for: failed, toBe: .completed, after: "the failing download", with: client)
            // Away from the popups: Plasma shows no new one while the pointer holds one.
            try await session.movePointer(x: PlasmaSession.width / 2, y: PlasmaSession.height / 3)
            _ = try await Self.download(
                server.url("/gen/256k?seed=65&throttle=100000"), to: artefacts.path("finished.bin"), with: client
            )
            try await waitUntil("the finished job", timeout: .seconds(60), every: .milliseconds(500), seen: { seen }) {
                seen = try await ImageProbe.text(in: try await shots.take("finished"), area: Self.popups)
                // "Downloading finished.bin (Finished)", wrapped or not.
                return seen.contains("Downloading finished.bin") && seen.contains("(Finished)")
            }
            await client.close()
            #expect(await hauld.stop().status == 0)
        }
    }

    /// On Plasma hauld shows transfers as jobs, which say themselves how they ended; without a job view
    /// (`--no-job-view`) it announces a finished download itself, beside its tray icon: Plasma's popup names it
    /// and carries Haul's buttons, and "Show in folder" opens the download's folder (with no file manager on the bus,
    /// through `xdg-open`, which runs KDE's `kde-open5`, in the home's handler of folders).
    @Test func aFinishedDownloadIsANotificationWhoseButtonsAct() async throws {
        try await Self.inPlasma("plasma-notification") { session, server, artefacts in
            // hauld in the session's environment, as the session's bus or systemd starts it: its screen, its
            // desktop, its home.
            let hauld = try await HauldProcess(
                bus: session.bus, arguments: ["--no-job-view"],
                environment: session.environment.merging(["HAULD_LOG_LEVEL": "debug"]) { $1 }
            )
            let client = try await DBusConnection.connect(address: session.bus.address)
            // Plasma takes a popup away after five seconds, unless the pointer is on it: it waits where it comes.
            try await session.movePointer(x: Self.popup.x + Self.popup.width / 2, y: Self.popup.y + 90)
            // A few seconds long: a transfer that ends before the bridge has seen it unfinished is not announced.
            let task = try await Self.download(
                server.url("/gen/256k?seed=62&throttle=100000"), to: artefacts.path("annual-report.pdf"), with: client
            )
            var shots = Screenshots(session: session, artefacts: artefacts)
            var shot = ""
            var button: (x: Int, y: Int)?
            try await waitUntil("the notification's Show in folder", timeout: .seconds(60), every: .milliseconds(200)) {
                shot = try await shots.take("notification")
                button = try await ImageProbe.locate("Show in folder", in: shot, area: Self.popup)
                return button != nil
            }
            let seen = try await ImageProbe.text(in: shot, area: Self.popup)
            #expect(seen.contains("Download complete") && seen.contains("annual-report") && seen.contains("Open"))
            let taskState = try await HauldCalls(client).property(.state, of: task)
            #expect(taskState == .state(.completed))
            let click = try #require(button)
            try await session.click(x: click.x, y: click.y)
            try await hauld.explainingFailure {
                try await waitUntil("the download's folder to open", timeout: .seconds(20)) {
                    session.openedFolder?.contains(artefacts.url.path) == true
                }
            }
            await client.close()
            #expect(await hauld.stop().status == 0)
        }
    }

    /// Right-clicks Haul's icon in the tray (found by its busy orange) and clicks `item` in the menu Plasma draws.
    static func chooseFromTrayMenu(
        _ item: String, shots: inout Screenshots, session: PlasmaSession
    ) async throws {
        var icon: (x: Int, y: Int)?
        try await waitUntil("Haul's busy icon in the tray", timeout: .seconds(30), every: .seconds(1)) {
            icon = try await Self.orangeMiddle(in: try await shots.take("tray"), area: Self.tray)
            return icon != nil
        }
        guard let icon else { return }
        try await session.click(x: icon.x, y: icon.y, button: 3)
        // The menu opens at the pointer, upwards and, at the screen's edge, leftwards: read only right of the icon, or
        // a popup's text beside it runs into the menu's lines.
        let menu = ImageProbe.Rectangle(
            x: icon.x - 10, y: 300, width: PlasmaSession.width - icon.x + 10, height: PlasmaSession.height - 340
        )
        var found: (x: Int, y: Int)?
        try await waitUntil("\(item) in the tray menu", timeout: .seconds(20), every: .seconds(1)) {
            found = try await ImageProbe.locate(item, in: try await shots.take("tray-menu"), area: menu)
            return found != nil
        }
        guard let found else { return }
        try await session.click(x: found.x, y: found.y)
    }

    /// Runs `body` in a Plasma session of its own, with a test HTTP server, keeping the screenshots and the logs in the
    /// artefact folder `name` (printed).
    static func inPlasma(
        _ name: String, _ body: (PlasmaSession, TestHTTPServer, ArtefactFolder) async throws -> Void
    ) async throws {
        let artefacts = try ArtefactFolder(name)
        print("Plasma screenshots and logs: \(artefacts.url.path)")
        let server = try await TestHTTPServer()
        defer { server.stop() }
        try await PlasmaSession.with(artefacts: artefacts) { session in try await body(session, server, artefacts) }
    }

    /// Numbered screenshots of the session in the artefact folder.
    struct Screenshots {
        let session: PlasmaSession
        let artefacts: ArtefactFolder
        var count = 0

        mutating func take(_ name: String) async throws -> String {
            count += 1
            let path = artefacts.path(String(format: "%02d-%@.png", count, name))
            try await session.screenshot(path)
            return path
        }
    }

    static func download(_ url: String, to file: String, with client: DBusConnection) async throws -> ObjectPath {
        let reply = try await HauldCalls(client).call(.download, [.string(url), .string(file)])
        guard case .objectPath(let task)? = reply.first else { throw TestSupportError("Download: \(reply)") }
        return task
    }

    static func wait(
        for task: ObjectPath, toBe state: TaskStateName, after what: String, with client: DBusConnection
    ) async throws {
        var last = DBusValue.string("")
        try await waitUntil("\(what) to make the task \(state.rawValue)", timeout: .seconds(30), seen: { "\(last)" }) {
            last = try await HauldCalls(client).property(.state, of: task)
            return last == .state(state)
        }
    }

    /// How many pixels of `area` are close to Haul's busy orange (#f57900).
    static func orangePixels(in image: String, area: ImageProbe.Rectangle) async throws -> Int {
        try await orangePoints(in: image, area: area).count
    }

    /// The middle of Haul's busy icon in `area`: of its orange pixels, when there are enough to be the icon.
    static func orangeMiddle(in image: String, area: ImageProbe.Rectangle) async throws -> (x: Int, y: Int)? {
        let points = try await orangePoints(in: image, area: area)
        guard points.count >= 40 else { return nil }
        let x = points.map(\.x).reduce(0, +) / points.count
        let y = points.map(\.y).reduce(0, +) / points.count
        return (area.x + x, area.y + y)
    }

    /// The pixels of `area` close to Haul's busy orange, relative to the area.
    private static func orangePoints(in image: String, area: ImageProbe.Rectangle) async throws -> [(x: Int, y: Int)] {
        let result = try await Command.run(
            ImageProbe.convert, [image, "-crop", area.description, "+repage", "-depth", "8", "txt:-"]
        )
        guard result.status == 0 else { throw TestSupportError("convert: \(result.stderr)") }
        // Lines such as "3,4: (245,121,0)  #F57900  srgb(245,121,0)".
        return result.stdout.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":"), let open = line.firstIndex(of: "("),
                let close = line.firstIndex(of: ")")
            else { return nil }
            let position = line[..<colon].split(separator: ",").compactMap { Int($0) }
            let channels = line[line.index(after: open)..<close].split(separator: ",").compactMap { Int($0) }
            guard position.count == 2, channels.count >= 3 else { return nil }
            let orange = abs(channels[0] - 0xF5) < 30 && abs(channels[1] - 0x79) < 30 && channels[2] < 40
            return orange ? (position[0], position[1]) : nil
        }
    }
}
