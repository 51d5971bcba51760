import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// What a browser hand-off test needs: a private bus (with hauld, or without for the browser's fallback), a home of
/// hauld's own whose download folder the test reads, and the test site serving one file behind its login.
struct HandOffFixture {
    let bus: PrivateBus
    let site: BrowserTestSite
    /// hauld's download folder, `~/Downloads` of its home.
    let hauldDownloads: URL
    /// The file the page links to, as the site serves it.
    let content: Data
    let fileName = "report.bin"
    let client: DBusConnection

    /// 2 MiB at 256 KiB/s: the browser's own download runs for 8 s, well beyond the 2 s the host may take to
    /// answer (Firefox goes on downloading meanwhile, and keeps a file it finished first).
    static let size = 2 << 20
    static let rate = 1 << 18

    static func with(hauld running: Bool, _ body: (HandOffFixture) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-handoff-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let www = directory.appendingPathComponent("www")
        let home = directory.appendingPathComponent("home")
        let hauldDownloads = home.appendingPathComponent("Downloads")
        for folder in [www, hauldDownloads] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let content = Data((0..<size).map { _ in UInt8.random(in: 0...255) })
        try content.write(to: www.appendingPathComponent("report.bin"))
        let site = try await BrowserTestSite(root: www, secret: UUID().uuidString, rate: rate)
        defer { site.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let hauld = running
            ? try await HauldProcess(
                // Its most talkative log, which must not hold the cookie either.
                bus: bus, arguments: ["--log-level", "trace"],
                environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path]
            ) : nil
        let client = try await DBusConnection.connect(address: bus.address)
        let fixture = HandOffFixture(
            bus: bus, site: site, hauldDownloads: hauldDownloads, content: content, client: client
        )
        do {
            try await body(fixture)
        } catch {
            await client.close()
            _ = await hauld?.stop()
            throw error
        }
        await client.close()
        if let log = await hauld?.stop() {
            let text = log.stdout + log.stderr
            #expect(text.contains("hauld is serving"), "hauld's log was not captured")
            #expect(!text.contains(site.secret), "hauld's log holds the cookie")
        }
    }

    /// The environment the browser gets: this test's bus, so that its host reaches this hauld (or none).
    var environment: [String: String] { bus.environment }

    var loginURL: String { site.url("/login") }
    var pageURL: String { site.url("/page") }
    var servedName: String { BrowserTestSite.servedName(fileName) }

    /// hauld's tasks, or none when hauld is not running.
    func tasks() async throws -> [TaskSnapshot] {
        guard try await client.nameHasOwner(HaulBus.name) else { return [] }
        let hauld = HauldCalls(client)
        let paths = try await hauld.call(.listTasks).first?.arrayValue ?? []
        var tasks: [TaskSnapshot] = []
        for path in paths.compactMap(\.objectPathValue) {
            tasks.append(TaskSnapshot(properties: try await hauld.properties(of: path)))
        }
        return tasks
    }

    /// The names in a folder, partial files included.
    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }
}
