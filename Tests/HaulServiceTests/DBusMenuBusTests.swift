import DBusKit
import Foundation
import HaulContract
import HaulDesktop
import HaulTestSupport
import Testing

/// The tray icon's menu as a panel (waybar, xfce4-panel, Plasma) reads and clicks it: `com.canonical.dbusmenu` at the
/// path of the item's `Menu`, against a running hauld on a private bus.
@Suite(.timeLimit(.minutes(2))) struct DBusMenuBusTests {
    typealias Item = TrayMenu.Item

    /// The menu of hauld's tray icon, found as a host finds it: the registered service's `Menu` property.
    struct Menu {
        let f: TransferFixture
        let service: String
        let path: ObjectPath

        func call(_ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
            try await f.client.call(
                destination: service, path: path, interface: DBusMenu.interface, member: member, body
            )
        }

        func click(_ item: Item, data: DBusValue = .variant(.int32(0))) async throws {
            _ = try await call("Event", [.int32(item.rawValue), .string(DBusMenu.clickedEvent), data, .uint32(0)])
        }

        func property(_ item: Item, _ name: String) async throws -> DBusValue? {
            try await call("GetProperty", [.int32(item.rawValue), .string(name)]).first?.unwrapped
        }

        /// The menu's `ItemsPropertiesUpdated` signals, recorded from now on.
        func updates() async throws -> (CallLog, Task<Void, Never>) {
            let signals = try await f.client.messages(matching: [
                MatchRule(
                    kind: .signal, sender: service, path: path, interface: DBusMenu.interface,
                    member: "ItemsPropertiesUpdated"
                )
            ])
            let log = CallLog()
            return (log, Task { for await message in signals { await log.record(signal: message) } })
        }
    }

    static func withMenu(environment: [String: String] = [:], _ body: (Menu) async throws -> Void) async throws {
        try await DesktopFixture.with { desktop throws in
            let watcher = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
            try await desktop.withHauld(environment: environment) { f throws in
                let service = try await DesktopFixture.call("RegisterStatusNotifierItem", in: watcher.log).sender
                let menu = try await f.client.property(
                    destination: service, path: StatusNotifierBusTests.item,
                    interface: StatusNotifierBusTests.interface, name: "Menu"
                )
                let path = try #require(menu.objectPathValue)
                #expect(path == DBusMenu.path)
                try await body(Menu(f: f, service: service, path: path))
            }
            await watcher.close()
        }
    }

    /// `ItemsPropertiesUpdated`'s `(id, properties)` pairs in `call`.
    static func updated(_ call: RecordedCall) -> [(Int32, [String: DBusValue])] {
        (call.arguments.first?.arrayValue ?? []).compactMap { entry in
            guard case .structure(let fields) = entry, fields.count == 2, let id = fields[0].int32Value,
                let properties = fields[1].stringDictionary
            else { return nil }
            return (id, properties.mapValues(\.unwrapped))
        }
    }

    static func announces(_ item: Item, _ key: String, _ value: DBusValue) -> @Sendable (RecordedCall) -> Bool {
        { call in updated(call).contains { $0.0 == item.rawValue && $0.1[key] == value } }
    }

    @Test func aHostReadsTheMenuWithGdbus() async throws {
        try await Self.withMenu { menu in
            // As waybar's libdbusmenu does it, through GDBus.
            let layout = try await Command.run(
                "/usr/bin/gdbus",
                [
                    "call", "--address", menu.f.daemon.bus.address, "--dest", menu.service, "--object-path",
                    menu.path.rawValue, "--method", "\(DBusMenu.interface).GetLayout", "--", "0", "-1", "@as []",
                ]
            )
            #expect(layout.status == 0, "\(layout.stderr)")
            for label in ["Suspend all", "Resume all", "Cancel all", "Download limit", "None", "1 MiB/s", "5 MiB/s",
                "10 MiB/s", "Open downloads folder", "'type': <'separator'>", "'toggle-type': <'radio'>"]
            {
                #expect(layout.stdout.contains(label), "\(label) in \(layout.stdout)")
            }
            let version = try await menu.f.client.property(
                destination: menu.service, path: menu.path, interface: DBusMenu.interface, name: "Version"
            )
            #expect(version == .uint32(3))
            // Nothing runs: only the limit and the folder are enabled, and no limit is set.
            #expect(try await menu.property(.suspendAll, DBusMenu.Key.enabled) == .boolean(false))
            #expect(try await menu.property(.noLimit, DBusMenu.Key.toggleState) == .int32(1))
            #expect(try await menu.call("AboutToShow", [.int32(0)]) == [.boolean(false)])
        }
    }

    @Test func suspendAllSuspendsAndTheMenuFollows() async throws {
        try await Self.withMenu { menu in
            let (updates, collecting) = try await menu.updates()
            defer { collecting.cancel() }
            let task = try await menu.f.download("/gen/8m?seed=51&throttle=300000", to: "menu.bin")
            try await menu.f.wait(task, until: .running)
            _ = try await DesktopFixture.call(
                "ItemsPropertiesUpdated", in: updates,
                where: Self.announces(.suspendAll, DBusMenu.Key.enabled, .boolean(true))
            )
            try await menu.click(.suspendAll)
            try await menu.f.wait(task, until: .suspended)
            _ = try await DesktopFixture.call(
                "ItemsPropertiesUpdated", in: updates,
                where: Self.announces(.resumeAll, DBusMenu.Key.enabled, .boolean(true))
            )
            #expect(try await menu.property(.suspendAll, DBusMenu.Key.enabled) == .boolean(false))
            try await menu.click(.resumeAll)
            try await menu.f.wait(task, until: .running)
            try await menu.click(.cancelAll)
            try await menu.f.wait(task, until: .completed)
            #expect(try await menu.f.errorName(task).hasSuffix("Cancelled"))
        }
    }

    @Test func choosingALimitSetsTheManagersAndTheRadioFollowsIt() async throws {
        try await Self.withMenu { menu in
            let (updates, collecting) = try await menu.updates()
            defer { collecting.cancel() }
            let hauld = HauldCalls(menu.f.client)
            func managerLimit() async throws -> DBusValue {
                try await hauld.property(.downloadRateLimit)
            }
            try await menu.click(.limit5MiB)
            try await waitUntil("DownloadRateLimit to be 5 MiB/s", timeout: .seconds(10)) {
                try await managerLimit() == .uint64(5 * TrayMenu.mebibyte)
            }
            _ = try await DesktopFixture.call(
                "ItemsPropertiesUpdated", in: updates,
                where: Self.announces(.limit5MiB, DBusMenu.Key.toggleState, .int32(1))
            )
            #expect(try await menu.property(.noLimit, DBusMenu.Key.toggleState) == .int32(0))
            // Set by another client: the radio item follows.
            try await hauld.set(.downloadRateLimit, to: .uint64(TrayMenu.mebibyte))
            _ = try await DesktopFixture.call(
                "ItemsPropertiesUpdated", in: updates,
                where: Self.announces(.limit1MiB, DBusMenu.Key.toggleState, .int32(1))
            )
            try await menu.click(.noLimit)
            try await waitUntil("no DownloadRateLimit", timeout: .seconds(10)) {
                try await managerLimit() == .uint64(0)
            }
        }
    }

    @Test func whatAHostSendsNeverHurts() async throws {
        try await Self.withMenu { menu in
            func refused(_ member: String, _ body: [DBusValue]) async {
                do {
                    _ = try await menu.call(member, body)
                    Issue.record("\(member)(\(body)) was answered")
                } catch let error as DBusError {
                    #expect(error.name == DBusError.invalidArgs("").name, "\(member): \(error)")
                } catch {
                    Issue.record("\(member): \(error)")
                }
            }
            for id in [Int32(-1), 11, .max, .min] {
                await refused("GetLayout", [.int32(id), .int32(-1), .strings([])])
                await refused("GetProperty", [.int32(id), .string(DBusMenu.Key.label)])
                await refused("Event", [.int32(id), .string(DBusMenu.clickedEvent), .variant(.int32(0)), .uint32(0)])
                await refused("AboutToShow", [.int32(id)])
            }
            await refused("GetProperty", [.int32(1), .string("no-such-property")])
            await refused("EventGroup", [
                .array(.structure([.int32, .string, .variant, .uint32]), [
                    .structure([.int32(99), .string(DBusMenu.clickedEvent), .variant(.int32(0)), .uint32(0)])
                ])
            ])
            // The wrong signature gets the standard error.
            await #expect(throws: DBusError.self) { _ = try await menu.call("Event", [.string("1")]) }
            // Any data, any event name, on an item that exists: accepted and harmless.
            let junk: [DBusValue] = [
                .variant(.variant(.variant(.string("deep")))), .variant(.vardict(["x": .int64(.min)])),
                .variant(.structure([.double(.nan), .objectPath("/x")])), .variant(.array(.byte, [])),
            ]
            for data in junk {
                _ = try await menu.call("Event", [.int32(4), .string(DBusMenu.clickedEvent), data, .uint32(.max)])
                _ = try await menu.call("Event", [.int32(1), .string("\u{FFFF}hovered\u{7}"), data, .uint32(0)])
            }
            let mixed = try await menu.call("EventGroup", [
                .array(.structure([.int32, .string, .variant, .uint32]), [
                    .structure([.int32(0), .string("opened"), .variant(.boolean(true)), .uint32(0)]),
                    .structure([.int32(-7), .string(DBusMenu.clickedEvent), .variant(.int32(0)), .uint32(0)]),
                ])
            ])
            #expect(mixed == [.array(.int32, [.int32(-7)])])
            let group = try await menu.call("AboutToShowGroup", [.array(.int32, [.int32(0), .int32(42)])])
            #expect(group == [.array(.int32, []), .array(.int32, [.int32(42)])])
            let properties = try await menu.call("GetGroupProperties", [
                .array(.int32, [.int32(.min), .int32(1)]), .strings(["label", ""]),
            ])
            #expect(properties.first?.arrayValue?.count == 1)
            // hauld is still there and the menu still answers.
            #expect(menu.f.daemon.hauld.running.isRunning)
            #expect(try await menu.property(.suspendAll, DBusMenu.Key.label) == .string("Suspend all"))
        }
    }

    /// The folder `user-dirs.dirs` names goes to `xdg-open`, found on `PATH`: here a script that notes its
    /// argument, and the signals it blocks or ignores (a child of hauld must not inherit its threads' mask: the
    /// file manager would ignore SIGTERM).
    @Test func openDownloadsFolderHandsXDGsFolderToXdgOpen() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("haul-menu-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let bin = scratch.appendingPathComponent("bin")
        let config = scratch.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let record = scratch.appendingPathComponent("opened")
        let script = bin.appendingPathComponent("xdg-open")
        let body = """
            #!/bin/sh
            grep -E '^Sig(Blk|Ign):' /proc/self/status > "\(record.path).tmp"
            printf '%s\\n' "$1" >> "\(record.path).tmp"
            mv "\(record.path).tmp" "\(record.path)"

            """
        // Written by a shell of its own: a file this process had open for writing could leak into a child another
        // test spawns meanwhile, and exec'ing it would then fail with ETXTBSY.
        let written = try await Command.run(
            "/bin/sh", ["-c", "cat > \"$0\" && chmod 755 \"$0\"", script.path], input: body
        )
        #expect(written.status == 0, "\(written.stderr)")
        try #"XDG_DOWNLOAD_DIR="$HOME/Fetched""#.write(
            to: config.appendingPathComponent("user-dirs.dirs"), atomically: true, encoding: .utf8
        )
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let environment = ["PATH": "\(bin.path):\(path)", "HOME": scratch.path, "XDG_CONFIG_HOME": config.path]
        try await Self.withMenu(environment: environment) { menu in
            try await menu.click(.openDownloads)
            try await waitUntil("xdg-open to run", timeout: .seconds(10)) {
                FileManager.default.fileExists(atPath: record.path)
            }
            let lines = try String(contentsOf: record, encoding: .utf8).split(separator: "\n")
            #expect(lines.last.map(String.init) == scratch.appendingPathComponent("Fetched").path)
            // None of the standard signals (1-31) blocked or ignored; glibc's own real-time ones may be.
            let masks = lines.dropLast().compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
            #expect(masks.count == 2 && masks.allSatisfy { $0 & 0x7fff_ffff == 0 }, "\(lines)")
        }
    }

    /// Without `xdg-open` (`PATH` is an empty folder: the browsers' packages install xdg-utils), the click is logged
    /// and nothing else.
    @Test func withoutXdgOpenTheClickIsLogged() async throws {
        let empty = try ArtefactFolder("no-xdg-open")
        try await Self.withMenu(environment: ["PATH": empty.url.path]) { menu in
            try await menu.click(.openDownloads)
            try await menu.click(.openDownloads)
            // The bridge goes on answering meanwhile.
            #expect(try await menu.property(.openDownloads, DBusMenu.Key.enabled) == .boolean(true))
            try await Task.sleep(for: .milliseconds(500))
            let stopped = await menu.f.daemon.hauld.stop()
            #expect(stopped.status == 0)
            #expect(stopped.stderr.contains("xdg-open is not installed"), "\(stopped.stderr)")
        }
    }
}
