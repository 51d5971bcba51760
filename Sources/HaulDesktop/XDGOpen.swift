import Glibc
package import Logging

/// Opens a file or folder as the desktop's file associations say, with `xdg-open` (xdg-utils), found on hauld's
/// `PATH`: "Open downloads folder" in the tray menu, "Open" and "Show in folder" in notifications.
///
/// No Foundation `Process` here: it would bring Foundation and ICU into hauld (6 MB of idle RSS). `xdg-open` is
/// started through util-linux's `setsid -f`, which forks it into a session of its own and exits at once: hauld has
/// only `setsid` to reap, no child that lives on, and the application opened is not in hauld's process group. (A
/// shell's `&` would not do: a non-interactive shell's background jobs ignore SIGINT and SIGQUIT.)
package enum XDGOpen {
    /// Hands `path` to `xdg-open`, logging what goes wrong.
    package static func open(_ path: String, logger: Logger) {
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        guard let xdgOpen = executable("xdg-open", in: searchPath) else {
            logger.warning("cannot open \(path): xdg-open is not installed (xdg-utils)")
            return
        }
        let setsid = executable("setsid", in: "/usr/bin:/bin") ?? "/usr/bin/setsid"
        let status = spawnAndReap(setsid, ["setsid", "-f", xdgOpen, path])
        if status != 0 {
            logger.warning("cannot start \(xdgOpen) for \(path) (status \(status))")
        } else {
            logger.debug("opened \(path) with \(xdgOpen)")
        }
    }

    /// The first executable `name` in `searchPath` (`PATH`'s value), or nil.
    package static func executable(_ name: String, in searchPath: String) -> String? {
        searchPath.split(separator: ":").lazy.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
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
