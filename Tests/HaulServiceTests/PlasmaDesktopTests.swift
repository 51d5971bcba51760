import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld in a real, headless Plasma 5.27 (``PlasmaSession``): its transfer is a job in plasmashell with the name, the
/// application and the percent, the job's Pause, Resume and Stop buttons (clicked with xdotool) suspend, resume and
/// cancel the task, and Haul's busy icon is drawn in the system tray. The screenshots are checked (pixels, and
/// tesseract's reading) and kept in `$TMPDIR/haul-plasma-<uuid>/`.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PlasmaDesktopTests {
    /// Where Plasma 5.27 draws on a 1280×800 screen: the newest job popup sits above the panel at the right, its
    /// Pause (Resume) and Stop buttons right of the progress bar; the tray's icons left of the clock.
    static let pauseButton = (x: 1162, y: 700)
    static let stopButton = (x: 1192, y: 700)
    static let popup = (x: 908, y: 610, width: 336, height: 112)
    static let tray = (x: 1000, y: 762, width: 110, height: 32)

    @Test func aTransferIsAPlasmaJobWhoseButtonsWorkAndTheTrayShowsHaulBusy() async throws {
        try #require(PlasmaSession.isInstalled, "Plasma is not installed: scripts/install-deps.sh test")
        let artefacts = FileManager.default.temporaryDirectory.appendingPathComponent("haul-plasma-\(UUID())")
        try FileManager.default.createDirectory(at: artefacts, withIntermediateDirectories: true)
        let server = try TestHTTPServer()
        defer { server.stop() }
        let session = try await PlasmaSession()
        defer { session.stop() }
        let hauld = try await HauldProcess(bus: session.bus, arguments: ["--no-notify"])
        let client = try await DBusConnection.connect(address: session.bus.address)
        defer { Task { await client.close() } }

        let file = artefacts.appendingPathComponent("plasma-job.bin").path
        let reply = try await client.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: ManagerMethod.download.rawValue,
            [.string(server.url("/gen/16m?seed=61&throttle=150000")), .string(file)]
        )
        let task = try #require(reply.first?.objectPathValue)
        func state() async throws -> String {
            try await client.property(
                destination: HaulBus.name, path: task, interface: HaulBus.taskInterface, name: TaskProperty.state.name
            ).stringValue ?? ""
        }

        // The job: its title, the application and a percent, read from the screen.
        var shots = 0
        func shot(_ name: String) async throws -> String {
            shots += 1
            let path = artefacts.appendingPathComponent("\(shots)-\(name).png").path
            try await session.screenshot(to: URL(fileURLWithPath: path))
            return path
        }
        var seen = ""
        try await waitUntil("the job in plasmashell", timeout: .seconds(60), seen: { seen }) {
            seen = try await Self.text(in: try await shot("job"), area: Self.popup)
            return seen.contains("Downloading plasma-job.bin") && seen.contains("Haul") && seen.contains("%")
        }
        // Haul's busy icon in the tray: orange (#f57900) among the panel's greys.
        let busy = try await Self.orangePixels(in: try await shot("tray"), area: Self.tray)
        #expect(busy >= 40, "orange pixels of haul-busy in the tray: \(busy)")

        try await session.click(x: Self.pauseButton.x, y: Self.pauseButton.y)
        try await waitUntil("Pause to suspend the task", timeout: .seconds(20)) { try await state() == "suspended" }
        _ = try await shot("paused")
        try await session.click(x: Self.pauseButton.x, y: Self.pauseButton.y)
        try await waitUntil("Resume to resume the task", timeout: .seconds(20)) { try await state() == "running" }
        try await session.click(x: Self.stopButton.x, y: Self.stopButton.y)
        try await waitUntil("Stop to cancel the task", timeout: .seconds(20)) { try await state() == "completed" }
        let error = try await client.property(
            destination: HaulBus.name, path: task, interface: HaulBus.taskInterface, name: TaskProperty.errorName.name
        )
        #expect(error == .string(HaulErrorName.cancelled.fullName))
        _ = try await shot("stopped")
        #expect(await hauld.stop().status == 0)
    }

    /// The text tesseract reads in `area` of a screenshot, enlarged three times first (panel text is small).
    static func text(in image: String, area: (x: Int, y: Int, width: Int, height: Int)) async throws -> String {
        let crop = image + ".crop.png"
        let geometry = "\(area.width)x\(area.height)+\(area.x)+\(area.y)"
        let converted = try await Command.run(
            "/usr/bin/convert", [image, "-crop", geometry, "+repage", "-resize", "300%", crop]
        )
        guard converted.status == 0 else { throw TestSupportError("convert: \(converted.stderr)") }
        let read = try await Command.run("/usr/bin/tesseract", [crop, "-", "--psm", "6"])
        guard read.status == 0 else { throw TestSupportError("tesseract: \(read.stderr)") }
        return read.stdout
    }

    /// How many pixels of `area` are close to Haul's busy orange.
    static func orangePixels(in image: String, area: (x: Int, y: Int, width: Int, height: Int)) async throws -> Int {
        let geometry = "\(area.width)x\(area.height)+\(area.x)+\(area.y)"
        let result = try await Command.run(
            "/usr/bin/convert", [image, "-crop", geometry, "+repage", "-depth", "8", "txt:-"]
        )
        guard result.status == 0 else { throw TestSupportError("convert: \(result.stderr)") }
        // Lines such as "3,4: (245,121,0)  #F57900  srgb(245,121,0)".
        return result.stdout.split(separator: "\n").filter { line in
            guard let open = line.firstIndex(of: "("), let close = line.firstIndex(of: ")") else { return false }
            let channels = line[line.index(after: open)..<close].split(separator: ",").compactMap { Int($0) }
            guard channels.count >= 3 else { return false }
            return abs(channels[0] - 0xF5) < 30 && abs(channels[1] - 0x79) < 30 && channels[2] < 40
        }.count
    }
}
