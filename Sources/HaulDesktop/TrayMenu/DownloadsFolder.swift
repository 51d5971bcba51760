import Glibc
import HaulCore
package import Logging

/// "Open downloads folder": the XDG download directory (`XDG_DOWNLOAD_DIR` of `user-dirs.dirs`, else `~/Downloads`)
/// shown with ``XDGOpen``.
package enum DownloadsFolder {
    /// The folder `userDirs` (the text of `user-dirs.dirs`, nil when there is none) names: `XDG_DOWNLOAD_DIR`'s value,
    /// which is `"$HOME/…"` or an absolute path; else `Downloads` in `home`.
    package static func path(userDirs: String?, home: String) -> String {
        let home = home.hasSuffix("/") ? String(home.dropLast()) : home
        for line in (userDirs ?? "").split(separator: "\n") {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            guard trimmed.hasPrefix("XDG_DOWNLOAD_DIR=") else { continue }
            var value = trimmed.dropFirst("XDG_DOWNLOAD_DIR=".count)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            if value.hasPrefix("$HOME") { return home + value.dropFirst("$HOME".count) }
            if value.hasPrefix("/") { return String(value) }
        }
        return home + "/Downloads"
    }

    /// The user's download folder, from `$XDG_CONFIG_HOME/user-dirs.dirs` and `$HOME` (hauld's `""` destination too).
    /// A `user-dirs.dirs` that is not a regular file (a FIFO would block the call that asked), or is larger than
    /// `largestUserDirs`, counts as none.
    package static func current() -> String {
        let environment = ProcessEnvironment()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? environment.home + "/.config"
        let userDirs = (try? RegularFile.contents(
            of: configHome + "/user-dirs.dirs", limit: largestUserDirs, followingLinks: true
        )).map { String(decoding: $0, as: UTF8.self) }
        return path(userDirs: userDirs, home: environment.home)
    }

    /// Far above what `xdg-user-dirs-update` writes (under a kilobyte).
    static let largestUserDirs = 64 << 10

    /// Finds the folder and hands it to `xdg-open`, logging what goes wrong.
    package static func open(logger: Logger) {
        XDGOpen.open(current(), logger: logger)
    }
}

/// hauld's environment, read with getenv (FoundationEssentials has no ProcessInfo).
private struct ProcessEnvironment {
    subscript(name: String) -> String? { getenv(name).map { String(cString: $0) } }

    var home: String { self["HOME"] ?? "/" }
}
