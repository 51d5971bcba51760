package import DBusKit
package import HaulContract

/// The tray icon's menu, as a pure value worked out from hauld's tasks and its download limit: Suspend all, Resume
/// all, Cancel all, a "Download limit" submenu of radio items, a separator and "Open downloads folder". It answers the
/// questions of ``DBusMenu`` (layouts, properties) and says what a click asks for (``Action``). Its structure never
/// changes; only the items' `enabled` and `toggle-state` do, which ``updates(since:)`` lists.
package struct TrayMenu: Sendable, Equatable {
    /// The items, by their dbusmenu id.
    package enum Item: Int32, CaseIterable, Sendable {
        case root = 0
        case suspendAll, resumeAll, cancelAll
        case downloadLimit, noLimit, limit1MiB, limit5MiB, limit10MiB
        case separator
        case openDownloads
    }

    /// What a click asks the bridge to do.
    package enum Action: Sendable, Equatable {
        /// `SuspendAll`, `ResumeAll` or `CancelAll` of the Manager.
        case manager(ManagerMethod)
        /// Set the Manager's `DownloadRateLimit` (bytes per second, 0 for none).
        case setDownloadRateLimit(UInt64)
        case openDownloadsFolder
    }

    /// The changed properties of one item, as `ItemsPropertiesUpdated` carries them.
    package struct Update: Sendable, Equatable {
        package var item: Item
        package var properties: [String: DBusValue]

        package init(item: Item, properties: [String: DBusValue]) {
            self.item = item
            self.properties = properties
        }
    }

    /// What a host asked that the menu does not have; answered with `InvalidArgs`.
    package struct Refusal: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    package static let mebibyte: UInt64 = 1_048_576
    /// Bumped only when the structure changes, which it never does: hauld has one layout.
    package static let revision: UInt32 = 1

    package private(set) var anyRunning = false
    package private(set) var anySuspended = false
    /// Running or suspended: what Cancel all acts on.
    package var anyUnfinished: Bool { anyRunning || anySuspended }
    package private(set) var downloadRateLimit: UInt64 = 0

    package init(tasks: some Sequence<TaskSnapshot> = [], downloadRateLimit: UInt64 = 0) {
        self.init(counts: TaskStateCounts(tasks), downloadRateLimit: downloadRateLimit)
    }

    package init(counts: TaskStateCounts, downloadRateLimit: UInt64 = 0) {
        anyRunning = counts.running > 0
        anySuspended = counts.suspended > 0
        self.downloadRateLimit = downloadRateLimit
    }

    // MARK: Structure

    package func children(of item: Item) -> [Item] {
        switch item {
        case .root: [.suspendAll, .resumeAll, .cancelAll, .downloadLimit, .separator, .openDownloads]
        case .downloadLimit: [.noLimit, .limit1MiB, .limit5MiB, .limit10MiB]
        default: []
        }
    }

    /// The limit a radio item stands for; nil for the other items.
    package static func rateLimit(of item: Item) -> UInt64? {
        switch item {
        case .noLimit: 0
        case .limit1MiB: mebibyte
        case .limit5MiB: 5 * mebibyte
        case .limit10MiB: 10 * mebibyte
        default: nil
        }
    }

    /// Every property of `item`, defaults included: a change then never needs `removedProps`.
    package func properties(of item: Item) -> [String: DBusValue] {
        typealias Key = DBusMenu.Key
        switch item {
        case .root:
            return [Key.childrenDisplay: .string(DBusMenu.submenuDisplay)]
        case .separator:
            return [Key.type: .string(DBusMenu.separatorType), Key.visible: .boolean(true)]
        case .downloadLimit:
            return [
                Key.label: .string("Download limit"), Key.enabled: .boolean(true), Key.visible: .boolean(true),
                Key.childrenDisplay: .string(DBusMenu.submenuDisplay),
            ]
        case .noLimit, .limit1MiB, .limit5MiB, .limit10MiB:
            let limit = Self.rateLimit(of: item) ?? 0
            return [
                Key.label: .string(limit == 0 ? "None" : "\(limit / Self.mebibyte) MiB/s"),
                Key.enabled: .boolean(true), Key.visible: .boolean(true),
                Key.toggleType: .string(DBusMenu.radioToggle),
                Key.toggleState: .int32(limit == downloadRateLimit ? 1 : 0),
            ]
        case .suspendAll, .resumeAll, .cancelAll, .openDownloads:
            return [
                Key.label: .string(label(of: item)), Key.enabled: .boolean(isEnabled(item)),
                Key.visible: .boolean(true),
            ]
        }
    }

    private func label(of item: Item) -> String {
        switch item {
        case .suspendAll: "Suspend all"
        case .resumeAll: "Resume all"
        case .cancelAll: "Cancel all"
        case .openDownloads: "Open downloads folder"
        default: ""
        }
    }

    /// Suspend all while something runs, Resume all while something is suspended, Cancel all while either.
    package func isEnabled(_ item: Item) -> Bool {
        switch item {
        case .suspendAll: anyRunning
        case .resumeAll: anySuspended
        case .cancelAll: anyUnfinished
        default: true
        }
    }

    // MARK: Questions of a host

    /// `GetLayout`'s `layout`: `parent` and its children `depth` levels down (all of them for a negative depth),
    /// each with the properties named in `names` (all for none).
    package func layout(parent id: Int32, depth: Int32, names: [String]) throws(Refusal) -> DBusValue {
        layout(of: try item(id), depth: depth, names: names)
    }

    private func layout(of item: Item, depth: Int32, names: [String]) -> DBusValue {
        // The tree is two levels deep: the recursion ends with it whatever the depth asked.
        let children = depth == 0 ? [] : children(of: item).map {
            DBusValue.variant(layout(of: $0, depth: depth < 0 ? depth : depth - 1, names: names))
        }
        return .structure([
            .int32(item.rawValue), .vardict(selected(properties(of: item), names)), .array(.variant, children),
        ])
    }

    /// `GetGroupProperties`: the items of `ids` (every item for none) with the properties named in `names`;
    /// ids the menu does not have are left out, as libdbusmenu does.
    package func groupProperties(ids: [Int32], names: [String]) -> DBusValue {
        let items = ids.isEmpty ? Item.allCases : ids.compactMap(Item.init(rawValue:))
        return .array(
            .structure([.int32, DBusMenu.properties]),
            items.map { .structure([.int32($0.rawValue), .vardict(selected(properties(of: $0), names))]) }
        )
    }

    /// `GetProperty`.
    package func property(id: Int32, name: String) throws(Refusal) -> DBusValue {
        guard let value = properties(of: try item(id))[name] else {
            throw Refusal(description: "menu item \(id) has no property \(name)")
        }
        return value
    }

    /// The item of `id`, or the refusal a host gets for an id the menu does not have.
    package func item(_ id: Int32) throws(Refusal) -> Item {
        guard let item = Item(rawValue: id) else { throw Refusal(description: "no menu item \(id)") }
        return item
    }

    /// What clicking `item` asks for; nil for a disabled item and for those that only hold others.
    package func action(clicking item: Item) -> Action? {
        guard isEnabled(item) else { return nil }
        switch item {
        case .suspendAll: return .manager(.suspendAll)
        case .resumeAll: return .manager(.resumeAll)
        case .cancelAll: return .manager(.cancelAll)
        case .openDownloads: return .openDownloadsFolder
        case .noLimit, .limit1MiB, .limit5MiB, .limit10MiB:
            return Self.rateLimit(of: item).map(Action.setDownloadRateLimit)
        case .root, .downloadLimit, .separator: return nil
        }
    }

    /// The items whose properties differ from `old`'s, with the properties that changed, by id.
    package func updates(since old: TrayMenu) -> [Update] {
        // Most task changes leave the menu as it was: no item's properties need working out then.
        guard self != old else { return [] }
        return Item.allCases.compactMap { item in
            let before = old.properties(of: item)
            let changed = properties(of: item).filter { before[$0.key] != $0.value }
            return changed.isEmpty ? nil : Update(item: item, properties: changed)
        }
    }

    private func selected(_ properties: [String: DBusValue], _ names: [String]) -> [String: DBusValue] {
        names.isEmpty ? properties : properties.filter { names.contains($0.key) }
    }
}
