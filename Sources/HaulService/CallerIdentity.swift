import Glibc
import HaulCore

/// Who is calling: the application behind a bus connection, for a new task's `Application`.
///
/// The bus gives the caller's process id (`CallerProcesses`); `/proc` tells the rest (`CallerApplication` parses it).
/// A sandboxed (Flatpak) caller is its app id, whatever it claims; an unsandboxed one may name itself (a browser's
/// native host names the browser), else its systemd app unit names it, else its executable. A caller that left, or a
/// `/proc` that cannot be read, is `""`.
enum CallerIdentity {
    static func application(of sender: String, claimed: String?, callers: any CallerProcesses) async -> String {
        guard !sender.isEmpty, let pid = try? await callers.processID(of: sender), pid > 0 else {
            return claimed ?? ""
        }
        let process = "/proc/\(pid)"
        if let info = read(process + "/root/.flatpak-info") { return CallerApplication.flatpakAppID(info) ?? "" }
        if let claimed { return claimed }
        return read(process + "/cgroup").flatMap(CallerApplication.systemdAppID(cgroup:))
            ?? read(process + "/comm").flatMap(CallerApplication.commandName) ?? ""
    }

    /// A small file of `/proc`, at most 64 KiB of it (the kernel makes them at once: nothing waits for a disk).
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}
