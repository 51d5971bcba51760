package import DBusKit

/// The menu protocol of tray icons, `com.canonical.dbusmenu` (libdbusmenu's `dbus-menu.xml`, which KDE's
/// `KStatusNotifierItem` and Ayatana's indicators export and Plasma, waybar and xfce4-panel read). Every name of it
/// is here; none is Haul's contract.
///
/// - properties: `Version` u (3), `TextDirection` s (`ltr`/`rtl`), `Status` s (`normal`/`notice`),
///   `IconThemePath` as;
/// - `GetLayout(i parentId, i recursionDepth, as propertyNames) → (u revision, (ia{sv}av) layout)`: an item is its
///   id, its properties and its children as variants of the same structure; a depth of -1 means all levels, and
///   an empty list of names all properties;
/// - `GetGroupProperties(ai ids, as propertyNames) → a(ia{sv})`, `GetProperty(i id, s name) → v`;
/// - `Event(i id, s eventId, v data, u timestamp)` with `clicked`, `hovered`, `opened`, `closed`;
///   `EventGroup(a(isvu)) → ai idErrors`;
/// - `AboutToShow(i id) → b needUpdate`, `AboutToShowGroup(ai ids) → (ai updatesNeeded, ai idErrors)`;
/// - signals `ItemsPropertiesUpdated(a(ia{sv}) updated, a(ias) removed)`, `LayoutUpdated(u revision, i parent)`,
///   `ItemActivationRequested(i id, u timestamp)`.
///
/// An item's properties: `type` (`standard`, `separator`), `label`, `enabled`, `visible`, `icon-name`,
/// `toggle-type` (`checkmark`, `radio`, ""), `toggle-state` (0 off, 1 on, -1 neither), `children-display`
/// (`submenu`). Item 0 is the root.
package enum DBusMenu {
    package static let interface = "com.canonical.dbusmenu"
    /// Where KDE's items export their menu; the item's `Menu` property points here.
    package static let path: ObjectPath = "/MenuBar"
    package static let version: UInt32 = 3
    package static let rootID: Int32 = 0

    /// Item property names.
    package enum Key {
        package static let type = "type"
        package static let label = "label"
        package static let enabled = "enabled"
        package static let visible = "visible"
        package static let toggleType = "toggle-type"
        package static let toggleState = "toggle-state"
        package static let childrenDisplay = "children-display"
    }

    package static let separatorType = "separator"
    package static let radioToggle = "radio"
    package static let submenuDisplay = "submenu"
    package static let clickedEvent = "clicked"

    /// `a{sv}`
    static let properties = DBusType.dictionary(key: .string, value: .variant)
    /// `(ia{sv}av)`
    static let layout = DBusType.structure([.int32, properties, .array(.variant)])
    /// `a(ia{sv})`
    static let itemProperties = DBusType.array(.structure([.int32, properties]))

    package static let description: DBusInterfaceDescription = {
        typealias Method = DBusInterfaceDescription.Method
        typealias Property = DBusInterfaceDescription.Property
        typealias Argument = DBusInterfaceDescription.Argument
        let ids = DBusType.array(.int32)
        return DBusInterfaceDescription(
            name: interface,
            methods: [
                Method(
                    "GetLayout",
                    inputs: [.init("parentId", .int32), .init("recursionDepth", .int32),
                        .init("propertyNames", .array(.string))],
                    outputs: [.init("revision", .uint32), .init("layout", layout)]
                ),
                Method(
                    "GetGroupProperties", inputs: [.init("ids", ids), .init("propertyNames", .array(.string))],
                    outputs: [.init("properties", itemProperties)]
                ),
                Method(
                    "GetProperty", inputs: [.init("id", .int32), .init("name", .string)],
                    outputs: [.init("value", .variant)]
                ),
                Method(
                    "Event",
                    inputs: [.init("id", .int32), .init("eventId", .string), .init("data", .variant),
                        .init("timestamp", .uint32)]
                ),
                Method(
                    "EventGroup", inputs: [.init("events", .array(.structure([.int32, .string, .variant, .uint32])))],
                    outputs: [.init("idErrors", ids)]
                ),
                Method("AboutToShow", inputs: [.init("id", .int32)], outputs: [.init("needUpdate", .boolean)]),
                Method(
                    "AboutToShowGroup", inputs: [.init("ids", ids)],
                    outputs: [.init("updatesNeeded", ids), .init("idErrors", ids)]
                ),
            ],
            signals: [
                .init(
                    "ItemsPropertiesUpdated",
                    [.init("updatedProps", itemProperties),
                        .init("removedProps", .array(.structure([.int32, .array(.string)])))]
                ),
                .init("LayoutUpdated", [.init("revision", .uint32), .init("parent", .int32)]),
                .init("ItemActivationRequested", [.init("id", .int32), .init("timestamp", .uint32)]),
            ],
            properties: [
                Property("Version", .uint32), Property("TextDirection", .string), Property("Status", .string),
                Property("IconThemePath", .array(.string)),
            ]
        )
    }()
}
