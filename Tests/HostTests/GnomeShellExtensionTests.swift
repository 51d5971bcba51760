import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// The GNOME Shell extension (integrations/gnome-shell) in the real headless gnome-shell, with the real hauld: the
/// indicator in the top bar while hauld's indicator is Visible, the menu's actions reaching hauld, hauld coming,
/// going and hanging. Screenshots go to the artefact folder the test prints, each checked here.
@Suite(.timeLimit(.minutes(5))) struct GnomeShellExtensionTests {
    @Test func theIndicatorShowsWhileHauldIsBusyAndTheMenuActsOnTheTransfers() async throws {
        let artefacts = try ArtefactFolder("gnome-shell-indicator")
        print("GNOME Shell screenshots and log: \(artefacts.url.path)")
        let server = try await TestHTTPServer()
        defer { server.stop() }
        try await GnomeShell.with(artefacts: artefacts) { shell in
            let hauld = try await HauldProcess(bus: shell.sessionBus, environment: shell.hauldEnvironment)
            let haul = try await Hauld.connect(shell.sessionBus)
            // One transfer at a time, so that the second waits for a slot.
            try await haul.setManager(.maxRunningTasks, .uint32(1))
            try await shell.waitForView("the extension to find hauld") { $0.status == "No transfers" }
            #expect(try await shell.describe().iconVisible == false)
            let idle = artefacts.path("1-idle.png")
            try await shell.screenshot(idle)

            let slow = "throttle=300000"
            let iso = try await haul.download(server.url("/gen/40m?seed=1&\(slow)"), to: shell.homeFile("debian.iso"))
            let tar = try await haul.download(server.url("/gen/40m?seed=2&\(slow)"), to: shell.homeFile("photos.tar"))
            // While hauld delays the indicator (a second by default), the button stays hidden: the extension
            // follows Visible, not the count of running transfers.
            let early = try await shell.describe()
            if try await haul.indicator(.state) == .state(.delayingStart) {
                #expect(early.iconVisible == false)
            }
            try await shell.waitForView("the button to show", timeout: .seconds(20)) { $0.iconVisible }
            #expect(try await haul.indicator(.visible) == .boolean(true))
            // The button laid out too: Shell allocates a newly shown actor at its next frame, and a screenshot taken
            // before found no button there (width 0).
            try await shell.waitForView("the rows of both transfers and the button's place") { view in
                view.row("debian.iso")?.title.hasSuffix("%") == true
                    && view.row("photos.tar")?.stateText == "Waiting for other transfers to finish"
                    && view.button.width > 10 && view.button.height > 10
            }
            let busyView = try await shell.describe()
            let busy = artefacts.path("2-busy.png")
            try await shell.screenshot(busy)
            // The button's area: an icon is drawn there, where the idle top bar had none.
            let button = ImageProbe.Rectangle(
                x: Int(busyView.button.x), y: Int(busyView.button.y), width: Int(busyView.button.width),
                height: Int(busyView.button.height)
            )
            #expect(button.width > 10 && button.height > 10, "the button at \(button)")
            let busyVariation = try await ImageProbe.variation(of: busy, in: button)
            let idleVariation = try await ImageProbe.variation(of: idle, in: button)
            #expect(busyVariation > idleVariation + 5, "busy \(busyVariation), idle \(idleVariation) at \(button)")

            try await shell.openMenu()
            try await shell.waitForView("the menu to open") { $0.menuOpen }
            let menu = artefacts.path("3-menu.png")
            try await shell.screenshot(menu)
            // The menu hangs below the button, at the right edge of the screen, and grows to the left with its widest
            // line: an open row's detail line took its left edge to x = 858, and a crop from 900 cut every line's first
            // letter ("lebian.iso", "fesume").
            let menuArea = ImageProbe.Rectangle(x: 760, y: 30, width: 520, height: 470)
            let text = try await ImageProbe.text(in: menu, area: menuArea)
            for expected in ["debian.iso", "photos.tar", "Suspend all", "Download limit", "Open downloads folder"] {
                #expect(text.contains(expected), "read in the menu: \(text)")
            }

            // A row opens to its detail line (progress and rate) and its actions.
            #expect(try await shell.activate(["debian.iso"]))
            let transfer = artefacts.path("4-transfer.png")
            var opened = ""
            try await waitUntil("the row to open", timeout: .seconds(20), every: .milliseconds(500), seen: { opened }) {
                try await shell.screenshot(transfer)
                opened = try await ImageProbe.text(in: transfer, area: menuArea)
                return ["of 40.0 MiB", "KiB/s", "Suspend", "Resume", "Cancel"].allSatisfy(opened.contains)
            }

            // Each row's actions reach the task.
            #expect(try await shell.activate(["debian.iso", "Suspend"]))
            try await waitUntil("debian.iso to be suspended") { try await haul.state(iso) == .suspended }
            try await shell.waitForView("the row to offer Resume") { $0.row("debian.iso")?.canResume == true }
            #expect(try await shell.activate(["debian.iso", "Resume"]))
            try await waitUntil("debian.iso to go on") { try await haul.state(iso) != .suspended }

            // The download limit.
            #expect(try await shell.activate(["Download limit", "1 MiB/s"]))
            try await waitUntil("the limit to be 1 MiB/s") {
                try await haul.manager(.downloadRateLimit) == .uint64(1_048_576)
            }
            try await shell.waitForView("the menu to select 1 MiB/s") {
                $0.item("Download limit", "1 MiB/s")?.selected == true
            }
            #expect(try await shell.activate(["Download limit", "None"]))
            try await waitUntil("no limit") { try await haul.manager(.downloadRateLimit) == .uint64(0) }

            // The actions for all.
            try await shell.waitForView("Suspend all to be offered") { $0.item("Suspend all")?.enabled == true }
            #expect(try await shell.activate(["Suspend all"]))
            try await waitUntil("both to be suspended") {
                let states = [try await haul.state(iso), try await haul.state(tar)]
                return states == [.suspended, .suspended]
            }
            try await shell.waitForView("Resume all to be offered") { $0.item("Resume all")?.enabled == true }
            #expect(try await shell.activate(["Resume all"]))
            try await waitUntil("both to go on") {
                let states = [try await haul.state(iso), try await haul.state(tar)]
                return !states.contains(.suspended)
            }
            try await shell.waitForView("photos.tar's Cancel") { $0.row("photos.tar")?.canCancel == true }
            #expect(try await shell.activate(["photos.tar", "Cancel"]))
            try await waitUntil("photos.tar to be cancelled") { try await haul.state(tar) == .completed }
            #expect(try await haul.task(tar, .errorName) == .string(HaulErrorName.cancelled.fullName))
            try await shell.waitForView("the row to say so") { $0.row("photos.tar")?.stateText == "Cancelled" }
            #expect(try await shell.activate(["Cancel all"]))
            try await waitUntil("debian.iso to be cancelled") { try await haul.state(iso) == .completed }

            // "Open downloads folder" shows it in the default file manager (here a script that notes it).
            #expect(try await shell.activate(["Open downloads folder"]))
            let downloads = shell.homeFile("Downloads")
            try await waitUntil("the file manager to be asked", seen: { shell.openedFolder ?? "nothing" }) {
                shell.openedFolder == downloads || shell.openedFolder == "file://" + downloads
            }

            // Idle again once hauld's completion delay has passed.
            try await shell.waitForView("the button to hide", timeout: .seconds(20)) { !$0.iconVisible }
            #expect(try await haul.indicator(.visible) == .boolean(false))
            let idleAgain = artefacts.path("5-idle-again.png")
            try await shell.screenshot(idleAgain)
            let againVariation = try await ImageProbe.variation(of: idleAgain, in: button)
            #expect(busyVariation > againVariation + 5, "busy \(busyVariation), idle again \(againVariation)")

            await haul.close()
            _ = await hauld.stop()
            try await shell.waitForView("the extension to see hauld leave") { $0.status == "Haul is not running" }
            #expect(!shell.hauldWasActivated)
        }
    }

    @Test func itFollowsHauldComingAndGoingAndGreysWhileHauldDoesNotAnswer() async throws {
        let artefacts = try ArtefactFolder("gnome-shell-bus")
        print("GNOME Shell screenshots and log: \(artefacts.url.path)")
        let server = try await TestHTTPServer()
        defer { server.stop() }
        try await GnomeShell.with(artefacts: artefacts) { shell in
            // Without hauld the extension waits, and starts nothing.
            #expect(try await shell.describe().status == "Haul is not running")
            try await shell.openMenu()
            try await shell.closeMenu()
            #expect(!shell.hauldWasActivated)

            let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-gnome-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: state) }
            var hauld = try await HauldProcess(
                bus: shell.sessionBus, stateDirectory: state, environment: shell.hauldEnvironment
            )
            var haul = try await Hauld.connect(shell.sessionBus)
            try await shell.waitForView("the extension to find hauld") { $0.status == "No transfers" }
            // A hold keeps the indicator (and so the button) up; a suspended download gives the menu a row.
            try await haul.hold()
            try await shell.waitForView("the button to show", timeout: .seconds(20)) { $0.iconVisible }
            let task = try await haul.download(
                server.url("/gen/40m?seed=3&throttle=300000"), to: shell.homeFile("debian.iso"), suspended: true
            )
            try await shell.waitForView("the row to offer Resume") { $0.row("debian.iso")?.canResume == true }

            // hauld stops answering: the menu greys (asked again when it opens), the shell goes on answering.
            kill(hauld.pid, SIGSTOP)
            try await shell.openMenu()
            try await shell.waitForView("the menu to grey", timeout: .seconds(30)) { $0.greyed }
            let greyed = try await shell.describe()
            #expect(greyed.status == "Haul is not responding")
            #expect(greyed.iconVisible, "the button stays")
            #expect(greyed.row("debian.iso")?.canResume == false)
            #expect(try await shell.activate(["debian.iso", "Resume"]) == false)
            #expect(greyed.item("Download limit")?.enabled == false)
            try await shell.screenshot(artefacts.path("greyed.png"))
            kill(hauld.pid, SIGCONT)
            try await shell.waitForView("the menu to come back", timeout: .seconds(30)) { !$0.greyed }
            #expect(try await shell.activate(["debian.iso", "Resume"]))
            try await waitUntil("debian.iso to run") { try await haul.state(task) != .suspended }

            // hauld leaves: the button goes and the menu says so; it comes back: so do its transfers.
            await haul.close()
            _ = await hauld.stop()
            try await shell.waitForView("the extension to see hauld leave") {
                $0.status == "Haul is not running" && !$0.iconVisible && $0.rows.isEmpty
            }
            #expect(!shell.hauldWasActivated)
            hauld = try await HauldProcess(
                bus: shell.sessionBus, stateDirectory: state, environment: shell.hauldEnvironment
            )
            haul = try await Hauld.connect(shell.sessionBus)
            try await shell.waitForView("the restored transfer in the menu") { $0.row("debian.iso") != nil }
            try await haul.setTask(task, suspend: true)
            await haul.close()
            _ = await hauld.stop()
            try await shell.waitForView("the extension to see hauld leave again") { $0.status == "Haul is not running" }
            #expect(!shell.hauldWasActivated)
        }
    }

    /// The extension's logic and the ES-module form (GNOME Shell 45 and later), under gjs without a shell:
    /// integrations/gnome-shell/tests/tests.js, which fails with status 1.
    @Test func theExtensionsOwnTestsPassUnderGjs() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let script = GnomeShell.repository.appendingPathComponent("integrations/gnome-shell/tests/tests.js").path
        let result = try await Command.run("gjs", ["-m", script], environment: bus.environment)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains(" passed, 0 failed"), "\(result.stdout)")
        #expect(!result.stdout.contains("not ok"), "\(result.stdout)")
    }
}

/// hauld on the test's bus, as the tests here call it.
private struct Hauld {
    let connection: DBusConnection

    static func connect(_ bus: PrivateBus) async throws -> Hauld {
        Hauld(connection: try await DBusConnection.connect(address: bus.address))
    }

    var calls: HauldCalls { HauldCalls(connection) }

    func close() async { await connection.close() }

    func download(_ url: String, to path: String, suspended: Bool = false) async throws -> ObjectPath {
        try await calls.download(url, to: path, options: [.startSuspended: .boolean(suspended)])
    }

    func hold() async throws {
        try await calls.call(.incrementActivityCount)
    }

    func setTask(_ task: ObjectPath, suspend: Bool) async throws {
        try await calls.call(suspend ? .suspend : .resume, on: task)
    }

    func task(_ task: ObjectPath, _ property: TaskProperty) async throws -> DBusValue {
        try await calls.property(property, of: task)
    }

    func state(_ task: ObjectPath) async throws -> TaskStateName? {
        try await self.task(task, .state).stringValue.flatMap(TaskStateName.init(rawValue:))
    }

    func indicator(_ property: IndicatorProperty) async throws -> DBusValue {
        try await calls.property(property)
    }

    func manager(_ property: ManagerProperty) async throws -> DBusValue {
        try await calls.property(property)
    }

    func setManager(_ property: ManagerProperty, _ value: DBusValue) async throws {
        try await calls.set(property, to: value)
    }
}
