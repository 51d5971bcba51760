import DBusKit
import HaulContract
import HaulDesktop
import Testing

/// The tray icon's menu as pure logic: its layout as `GetLayout` hands it out, the states that follow the tasks and
/// the download limit, what a click asks for, and what it refuses.
@Suite(.timeLimit(.minutes(2))) struct TrayMenuTests {
    typealias Item = TrayMenu.Item
    static let mebibyte = TrayMenu.mebibyte

    /// A `(ia{sv}av)` layout as (id, properties, children).
    struct Node: Equatable {
        var id: Int32
        var properties: [String: DBusValue]
        var children: [Node]

        init?(_ value: DBusValue) {
            guard case .structure(let fields) = value.unwrapped, fields.count == 3, let id = fields[0].int32Value,
                let properties = fields[1].stringDictionary, let children = fields[2].arrayValue
            else { return nil }
            self.id = id
            self.properties = properties.mapValues(\.unwrapped)
            self.children = children.compactMap(Node.init)
            guard self.children.count == children.count else { return nil }
        }

        var label: String? { properties[DBusMenu.Key.label]?.stringValue }
    }

    @Test func theLayoutHoldsTheItemsInOrder() throws {
        let menu = TrayMenu()
        let root = try #require(Node(try menu.layout(parent: 0, depth: -1, names: [])))
        #expect(root.id == DBusMenu.rootID)
        #expect(root.properties[DBusMenu.Key.childrenDisplay] == .string(DBusMenu.submenuDisplay))
        #expect(
            root.children.map(\.label)
                == ["Suspend all", "Resume all", "Cancel all", "Download limit", nil, "Open downloads folder"])
        #expect(root.children[4].properties[DBusMenu.Key.type] == .string(DBusMenu.separatorType))
        let limits = root.children[3]
        #expect(limits.id == Item.downloadLimit.rawValue)
        #expect(limits.properties[DBusMenu.Key.childrenDisplay] == .string(DBusMenu.submenuDisplay))
        #expect(limits.children.map(\.label) == ["None", "1 MiB/s", "5 MiB/s", "10 MiB/s"])
        #expect(limits.children.allSatisfy { $0.properties[DBusMenu.Key.toggleType] == .string(DBusMenu.radioToggle) })
        #expect(Set(root.children.map(\.id) + limits.children.map(\.id)).count == Item.allCases.count - 1)
    }

    @Test func theDepthAndTheNamesLimitTheLayout() throws {
        let menu = TrayMenu()
        let flat = try #require(Node(try menu.layout(parent: 0, depth: 0, names: [])))
        #expect(flat.children.isEmpty)
        let oneLevel = try #require(Node(try menu.layout(parent: 0, depth: 1, names: [DBusMenu.Key.label])))
        #expect(oneLevel.children.count == 6)
        #expect(oneLevel.children.allSatisfy { $0.children.isEmpty })
        #expect(oneLevel.children[0].properties == [DBusMenu.Key.label: .string("Suspend all")])
        let submenu = try #require(Node(try menu.layout(parent: Item.downloadLimit.rawValue, depth: -1, names: [])))
        #expect(submenu.children.map(\.id) == [Item.noLimit, .limit1MiB, .limit5MiB, .limit10MiB].map(\.rawValue))
        // A depth below -1 is as deep as it goes, as libdbusmenu reads it.
        let everything = try menu.layout(parent: 0, depth: -1, names: [])
        #expect(try menu.layout(parent: 0, depth: .min, names: []) == everything)
    }

    @Test func theActionsAreEnabledForWhatTheTasksAre() {
        func enabled(_ tasks: [TaskSnapshot]) -> [Bool] {
            let menu = TrayMenu(tasks: tasks)
            return [Item.suspendAll, .resumeAll, .cancelAll, .openDownloads].map {
                menu.properties(of: $0)[DBusMenu.Key.enabled] == .boolean(true)
            }
        }
        #expect(enabled([]) == [false, false, false, true])
        #expect(enabled([Tasks.download(.completed)]) == [false, false, false, true])
        #expect(enabled([Tasks.download(.running)]) == [true, false, true, true])
        #expect(enabled([Tasks.download(.suspended)]) == [false, true, true, true])
        #expect(enabled([Tasks.download(.canceling)]) == [false, false, false, true])
        #expect(enabled([Tasks.download(.running), Tasks.download(.suspended, id: 2)]) == [true, true, true, true])
    }

    @Test func theRadioItemThatIsOnIsTheCurrentLimit() {
        func on(_ limit: UInt64) -> [Item] {
            let menu = TrayMenu(downloadRateLimit: limit)
            return Item.allCases.filter { menu.properties(of: $0)[DBusMenu.Key.toggleState] == .int32(1) }
        }
        #expect(on(0) == [.noLimit])
        #expect(on(Self.mebibyte) == [.limit1MiB])
        #expect(on(5 * Self.mebibyte) == [.limit5MiB])
        #expect(on(10 * Self.mebibyte) == [.limit10MiB])
        // A limit set elsewhere (`haul limit 2M`) is none of the choices.
        #expect(on(2 * Self.mebibyte).isEmpty)
    }

    @Test func aClickAsksForWhatTheItemSays() {
        let busy = TrayMenu(tasks: [Tasks.download(.running), Tasks.download(.suspended, id: 2)])
        #expect(busy.action(clicking: .suspendAll) == .manager(.suspendAll))
        #expect(busy.action(clicking: .resumeAll) == .manager(.resumeAll))
        #expect(busy.action(clicking: .cancelAll) == .manager(.cancelAll))
        #expect(busy.action(clicking: .noLimit) == .setDownloadRateLimit(0))
        #expect(busy.action(clicking: .limit1MiB) == .setDownloadRateLimit(Self.mebibyte))
        #expect(busy.action(clicking: .limit5MiB) == .setDownloadRateLimit(5 * Self.mebibyte))
        #expect(busy.action(clicking: .limit10MiB) == .setDownloadRateLimit(10 * Self.mebibyte))
        #expect(busy.action(clicking: .openDownloads) == .openDownloadsFolder)
        for holder in [Item.root, .downloadLimit, .separator] { #expect(busy.action(clicking: holder) == nil) }
        // A disabled item does nothing, whatever a host sends.
        let idle = TrayMenu()
        #expect(idle.action(clicking: .suspendAll) == nil)
        #expect(idle.action(clicking: .resumeAll) == nil)
        #expect(idle.action(clicking: .cancelAll) == nil)
        #expect(idle.action(clicking: .openDownloads) == .openDownloadsFolder)
    }

    @Test func theUpdatesAreTheChangedPropertiesOfTheChangedItems() {
        let idle = TrayMenu()
        let running = TrayMenu(tasks: [Tasks.download(.running)])
        #expect(idle.updates(since: idle).isEmpty)
        #expect(
            running.updates(since: idle) == [
                .init(item: .suspendAll, properties: [DBusMenu.Key.enabled: .boolean(true)]),
                .init(item: .cancelAll, properties: [DBusMenu.Key.enabled: .boolean(true)]),
            ])
        let limited = TrayMenu(downloadRateLimit: 5 * Self.mebibyte)
        #expect(
            limited.updates(since: idle) == [
                .init(item: .noLimit, properties: [DBusMenu.Key.toggleState: .int32(0)]),
                .init(item: .limit5MiB, properties: [DBusMenu.Key.toggleState: .int32(1)]),
            ])
    }

    @Test func whatTheMenuDoesNotHaveIsRefused() throws {
        let menu = TrayMenu()
        for id in [Int32(-1), 11, .max, .min] {
            #expect(throws: TrayMenu.Refusal.self) { try menu.layout(parent: id, depth: -1, names: []) }
            #expect(throws: TrayMenu.Refusal.self) { try menu.property(id: id, name: DBusMenu.Key.label) }
            #expect(throws: TrayMenu.Refusal.self) { try menu.item(id) }
        }
        #expect(throws: TrayMenu.Refusal.self) { try menu.property(id: 1, name: "no-such-property") }
        #expect(try menu.property(id: 1, name: DBusMenu.Key.label) == .string("Suspend all"))
        // Group questions leave out the ids the menu does not have.
        let group = menu.groupProperties(ids: [1, 99, -5, 3], names: [DBusMenu.Key.label])
        let ids = group.arrayValue?.compactMap { entry -> Int32? in
            guard case .structure(let fields) = entry else { return nil }
            return fields.first?.int32Value
        }
        #expect(ids == [1, 3])
        #expect(menu.groupProperties(ids: [], names: []).arrayValue?.count == Item.allCases.count)
    }

    @Test func theDownloadsFolderIsXDGsOrDownloadsAtHome() {
        let dirs = "# written by xdg-user-dirs-update\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_DOWNLOAD_DIR=\"$HOME/Fetched\"\n"
        #expect(DownloadsFolder.path(userDirs: dirs, home: "/home/u") == "/home/u/Fetched")
        #expect(DownloadsFolder.path(userDirs: #"XDG_DOWNLOAD_DIR="/srv/in""#, home: "/home/u") == "/srv/in")
        #expect(DownloadsFolder.path(userDirs: nil, home: "/home/u") == "/home/u/Downloads")
        #expect(DownloadsFolder.path(userDirs: "", home: "/home/u/") == "/home/u/Downloads")
        #expect(DownloadsFolder.path(userDirs: #"XDG_DOWNLOAD_DIR="relative""#, home: "/home/u") == "/home/u/Downloads")
        #expect(XDGOpen.executable("sh", in: "/nonexistent:/bin") == "/bin/sh")
        #expect(XDGOpen.executable("no-such-program-here", in: "/usr/bin:/bin") == nil)
    }
}
