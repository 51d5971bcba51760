import FoundationEssentials
import Glibc
package import Logging

/// "Open downloads folder": the XDG download directory (`XDG_DOWNLOAD_DIR` of `user-dirs.dirs`, else `~/Downloads`)
/// shown with `xdg-open`.
///
/// No Foundation `Process` here: it would bring Foundation and ICU into hauld (6 MB of idle RSS). `xdg-open` is
/// started through util-linux's `setsid -f`, which forks it into a session of its own and exits at once: hauld has
/// only `setsid` to reap, no child that lives on, and the file manager is not in hauld's process group. (A shell's
/// `&` would not do: a non-interactive shell's background jobs ignore SIGINT and SIGQUIT.)
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

    /// The first executable `name` in `searchPath` (`PATH`'s value), or nil.
    package static func executable(_ name: String, in searchPath: String) -> String? {
        searchPath.split(separator: ":").lazy.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// The user's download folder, from `$XDG_CONFIG_HOME/user-dirs.dirs` and `$HOME` (hauld's `""` destination too).
    package static func current() -> String {
        let environment = ProcessEnvironment()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? environment.home + "/.config"
        let userDirs = (try? Data(contentsOf: URL(filePath: configHome + "/user-dirs.dirs")))
            .map { String(decoding: $0, as: UTF8.self) }
        return path(userDirs: userDirs, home: environment.home)
    }

    /// Finds the folder and hands it to `xdg-open`, logging what goes wrong.
    package static func open(logger: Logger) {
        let environment = ProcessEnvironment()
        let folder = current()
        guard let xdgOpen = executable("xdg-open", in: environment["PATH"] ?? "/usr/bin:/bin") else {
            logger.warning("cannot open \(folder): xdg-open is not installed (xdg-utils)")
            return
        }
        let setsid = executable("setsid", in: "/usr/bin:/bin") ?? "/usr/bin/setsid"
        let status = spawnAndReap(setsid, ["setsid", "-f", xdgOpen, folder])
        if status != 0 { logger.warning("cannot start \(xdgOpen) for \(folder) (status \(status))") }
        else { logger.debug("opened \(folder) with \(xdgOpen)") }
    }

    /// Runs `path` with `arguments` (the first is its name), its standard streams on /dev/null, every signal at its
    /// default and none blocked (hauld's threads block some), and waits for it: `setsid -f` ends within milliseconds.
    /// Returns its exit status, or -1 when it could not start.
    private static func spawnAndReap(_ path: String, _ arguments: [String]) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var streams = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&streams)
        defer { posix_spawn_file_actions_destroy(&streams) }
        for fd: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&streams, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var argv = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        guard posix_spawn(&pid, path, &streams, &attributes, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
}

/// hauld's environment, read with getenv (FoundationEssentials has no ProcessInfo).
private struct ProcessEnvironment {
    subscript(name: String) -> String? { getenv(name).map { String(cString: $0) } }

    var home: String { self["HOME"] ?? "/" }
}
