import Foundation
package import Logging

/// "Open downloads folder": the XDG download directory (`xdg-user-dir DOWNLOAD`, else `~/Downloads`) shown with
/// `xdg-open`. Both run as child processes the bridge never waits for.
package enum DownloadsFolder {
    /// The folder for what `xdg-user-dir DOWNLOAD` printed (nil when it could not run or failed): its line when that
    /// is an absolute path, else `Downloads` in `home`.
    package static func path(xdgUserDir output: String?, home: String) -> String {
        let line = output?.split(separator: "\n").first.map(String.init) ?? ""
        if line.hasPrefix("/") { return line }
        return (home.hasSuffix("/") ? home : home + "/") + "Downloads"
    }

    /// Finds the folder and hands it to `xdg-open`, logging what goes wrong. Returns once `xdg-open` has started.
    package static func open(logger: Logger) async {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        let found = await run("xdg-user-dir", ["DOWNLOAD"], output: true)
        let output = found.status == 0 ? found.output : nil
        let folder = path(xdgUserDir: output, home: home)
        // xdg-open may stay until the file manager is up; the child is reaped whenever it ends.
        Task {
            let opened = await run("xdg-open", [folder], output: false)
            switch opened.status {
            case 0: logger.debug("opened \(folder) with xdg-open")
            case 127: logger.warning("cannot open \(folder): xdg-open is not installed (xdg-utils)")
            default: logger.warning("xdg-open \(folder) failed with status \(opened.status)")
            }
        }
    }

    /// Runs `command` found on `PATH` (through `env`, which exits 127 when it is missing) and waits for its end
    /// without holding a thread; status -1 when it could not start.
    private static func run(
        _ command: String, _ arguments: [String], output: Bool
    ) async -> (status: Int32, output: String?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        process.standardInput = FileHandle.nullDevice
        let pipe = output ? Pipe() : nil
        process.standardOutput = pipe ?? FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let status = await withCheckedContinuation { (ended: CheckedContinuation<Int32, Never>) in
            process.terminationHandler = { ended.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                ended.resume(returning: -1)
            }
        }
        // Read once it ended: `xdg-user-dir` prints one line, far below what a pipe holds.
        let data = pipe.map { $0.fileHandleForReading.readDataToEndOfFile() }
        return (status, data.map { String(decoding: $0, as: UTF8.self) })
    }
}
