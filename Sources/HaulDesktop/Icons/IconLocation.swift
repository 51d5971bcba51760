import FoundationEssentials
import Glibc

/// Where the desktop finds Haul's icons (``HaulIcon``). Installed (`make install`, the Debian package), they are in
/// the `hicolor` theme of an XDG data folder, and their names are all a host needs. An uninstalled hauld (run from
/// the build folder, or unpacked somewhere) finds them beside its executable, in `../share/icons` or in the source
/// tree's `integrations/icons`, and names that folder: the tray icon's `IconThemePath`, and the notifications' icon
/// file. Found nowhere, the tray icon carries pixmaps as well (``IconRaster``).
package struct IconLocation: Sendable, Equatable {
    /// A folder that holds `hicolor/scalable/apps/haul.svg` outside the theme's search path; nil when there is none.
    package var folder: String?
    /// Whether the `hicolor` theme of an XDG data folder has the icons.
    package var isInstalled: Bool

    /// The SVG of an icon, relative to an `icons` folder.
    package static func file(_ icon: HaulIcon) -> String { "hicolor/scalable/apps/\(icon.name).svg" }

    package init(folder: String? = nil, isInstalled: Bool = true) {
        self.folder = folder
        self.isInstalled = isInstalled
    }

    /// `IconThemePath`: the folder, or empty when the theme has the icons (or nothing was found).
    package var themePath: String { isInstalled ? "" : folder ?? "" }

    /// Whether hosts need the icons as pixmaps: neither the theme nor a folder has them.
    package var needsPixmaps: Bool { !isInstalled && folder == nil }

    /// `Notify`'s `app_icon`: the name when the theme has it, else nil (the caller gives a standard icon). Not a
    /// `file://` URI of the SVG, which the spec allows: GNOME Shell 43 then accepts the notification and shows no
    /// banner for it.
    package func notificationIcon(_ icon: HaulIcon) -> String? {
        isInstalled ? icon.name : nil
    }

    /// Looks in the theme of every XDG data folder (`dataHome` first, then `dataDirectories`), then beside
    /// `executable` (its folder's `../share/icons`, then `integrations/icons` in it or one of its four parents).
    package static func locate(
        executable: String?, dataHome: String, dataDirectories: [String], exists: (String) -> Bool
    ) -> IconLocation {
        let file = Self.file(.idle)
        if ([dataHome] + dataDirectories).contains(where: { !$0.isEmpty && exists("\($0)/icons/\(file)") }) {
            return IconLocation(isInstalled: true)
        }
        guard let executable, executable.hasPrefix("/") else { return IconLocation(isInstalled: false) }
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        var candidates = [folder.deletingLastPathComponent().appendingPathComponent("share/icons")]
        for _ in 0...4 {
            candidates.append(folder.appendingPathComponent("integrations/icons"))
            folder = folder.deletingLastPathComponent()
        }
        let found = candidates.map { $0.standardizedFileURL.path }.first { exists("\($0)/\(file)") }
        return IconLocation(folder: found, isInstalled: false)
    }

    /// ``locate(executable:dataHome:dataDirectories:exists:)`` for this process: `/proc/self/exe`, and the XDG
    /// base directory variables of `environment` with their defaults.
    package static func locate(environment: [String: String]) -> IconLocation {
        let home = environment["HOME"] ?? "/"
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let dataDirectories = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultDataDirectories)
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return locate(
            executable: executablePath(), dataHome: dataHome, dataDirectories: dataDirectories,
            exists: { access($0, R_OK) == 0 }
        )
    }

    /// `XDG_DATA_DIRS` when it is not set.
    private static let defaultDataDirectories = "/usr/local/share:/usr/share"

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
