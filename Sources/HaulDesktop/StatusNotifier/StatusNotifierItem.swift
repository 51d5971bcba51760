package import DBusKit

/// The StatusNotifierItem tray icon standard (freedesktop StatusNotifierItem spec, with the interface names KDE
/// ships in kstatusnotifieritem's `org.kde.StatusNotifierItem.xml`, which Plasma, waybar's tray and GNOME's
/// AppIndicator extension all read):
///
/// - the item: `org.kde.StatusNotifierItem` at `/StatusNotifierItem` on the connection that registers it, with
///   read-only properties `Category` s, `Id` s, `Title` s, `Status` s (`Passive`, `Active`, `NeedsAttention`),
///   `WindowId` i, `IconThemePath` s, `Menu` o, `ItemIsMenu` b, `IconName` s, `IconPixmap` a(iiay),
///   `OverlayIconName` s, `OverlayIconPixmap` a(iiay), `AttentionIconName` s, `AttentionIconPixmap` a(iiay),
///   `AttentionMovieName` s, `ToolTip` (sa(iiay)ss); methods `ContextMenu(i x, i y)`, `Activate(i x, i y)`,
///   `SecondaryActivate(i x, i y)`, `Scroll(i delta, s orientation)`; signals `NewTitle()`, `NewIcon()`,
///   `NewAttentionIcon()`, `NewOverlayIcon()`, `NewToolTip()`, `NewStatus(s status)`;
/// - the watcher: `org.kde.StatusNotifierWatcher.RegisterStatusNotifierItem(s service)` on
///   `org.kde.StatusNotifierWatcher` at `/StatusNotifierWatcher`. As KDE's own `KStatusNotifierItem` does, the
///   item registers its connection's unique name; the watcher then reads `/StatusNotifierItem` there.
package enum StatusNotifierItem {
    package static let path: ObjectPath = "/StatusNotifierItem"
    package static let interface = "org.kde.StatusNotifierItem"
    package static let watcherName = "org.kde.StatusNotifierWatcher"
    package static let watcherPath: ObjectPath = "/StatusNotifierWatcher"
    package static let watcherInterface = "org.kde.StatusNotifierWatcher"

    /// The tooltip's icon.
    package static let iconName = HaulIcon.idle.name
    /// `(iiay)`: an ARGB32 image as width, height and bytes.
    static let pixmap = DBusType.structure([.int32, .int32, .array(.byte)])
    static let pixmapType = DBusType.array(pixmap)
    static let toolTipType = DBusType.structure([.string, pixmapType, .string, .string])

    /// The item's status for the indicator's visibility: `Active` shows the icon, `Passive` lets the panel
    /// hide it.
    package static func status(visible: Bool) -> String { visible ? "Active" : "Passive" }

    package static let description: DBusInterfaceDescription = {
        typealias Method = DBusInterfaceDescription.Method
        typealias Property = DBusInterfaceDescription.Property
        let position: [DBusInterfaceDescription.Argument] = [.init("x", .int32), .init("y", .int32)]
        return DBusInterfaceDescription(
            name: interface,
            methods: [
                Method("ContextMenu", inputs: position),
                Method("Activate", inputs: position),
                Method("SecondaryActivate", inputs: position),
                Method("Scroll", inputs: [.init("delta", .int32), .init("orientation", .string)]),
            ],
            signals: ["NewTitle", "NewIcon", "NewAttentionIcon", "NewOverlayIcon", "NewToolTip"].map { .init($0) }
                + [.init("NewStatus", [.init("status", .string)])],
            properties: [
                Property("Category", .string), Property("Id", .string), Property("Title", .string),
                Property("Status", .string), Property("WindowId", .int32), Property("IconThemePath", .string),
                Property("Menu", .objectPath), Property("ItemIsMenu", .boolean), Property("IconName", .string),
                Property("IconPixmap", pixmapType), Property("OverlayIconName", .string),
                Property("OverlayIconPixmap", pixmapType), Property("AttentionIconName", .string),
                Property("AttentionIconPixmap", pixmapType), Property("AttentionMovieName", .string),
                Property("ToolTip", toolTipType),
            ]
        )
    }()

    /// The icon properties for the indicator's visibility: `IconName` (``HaulIcon``), and `IconPixmap` when hosts
    /// cannot find the icon by its name (``IconLocation/needsPixmaps``); else an empty `IconPixmap`, which hosts
    /// such as Plasma would draw instead of the named icon.
    package static func icon(busy: Bool, icons: IconLocation) -> [String: DBusValue] {
        let icon = HaulIcon(busy: busy)
        return [
            "IconName": .string(icon.name),
            "IconPixmap": icons.needsPixmaps ? IconRaster.pixmaps(icon) : .array(pixmap, []),
        ]
    }

    /// The exported item. Its menu is ``DBusMenu`` at ``DBusMenu/path``, which hosts show themselves; Haul has no
    /// window, so clicks and scrolls are accepted and do nothing. `IconThemePath` names the folder of an uninstalled
    /// hauld's icons.
    static func exportedInterface(visible: Bool, toolTip: TrayToolTip, icons: IconLocation) -> DBusExportedInterface {
        let nothing: DBusExportedInterface.MethodHandler = { _ in [] }
        return DBusExportedInterface(
            description,
            methods: [
                "ContextMenu": nothing, "Activate": nothing, "SecondaryActivate": nothing,
                "Scroll": { call in
                    let orientation = call.arguments[1].stringValue?.lowercased()
                    guard orientation == "vertical" || orientation == "horizontal" else {
                        throw DBusError.invalidArgs("orientation must be \"vertical\" or \"horizontal\"")
                    }
                    return []
                },
            ],
            properties: [
                // The activity of a background service, as the spec's SystemServices example.
                "Category": .string("SystemServices"),
                "Id": .string(KDEJobView.desktopEntry),
                "Title": .string(KDEJobView.applicationName),
                "Status": .string(status(visible: visible)),
                "WindowId": .int32(0),
                "IconThemePath": .string(icons.themePath),
                "Menu": .objectPath(DBusMenu.path),
                "ItemIsMenu": .boolean(false),
                "OverlayIconName": .string(""),
                "OverlayIconPixmap": .array(pixmap, []),
                "AttentionIconName": .string(""),
                "AttentionIconPixmap": .array(pixmap, []),
                "AttentionMovieName": .string(""),
                "ToolTip": toolTip.value,
            ].merging(icon(busy: visible, icons: icons)) { $1 }
        )
    }
}
