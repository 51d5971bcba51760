import Foundation

/// The file manager of a throwaway home, as `xdg-open` finds it: a script, the home's handler of folders
/// (`inode/directory`, in `mimeapps.list`), that notes what it was asked to show. No file manager runs here.
struct FolderHandler: Sendable {
    private let mark: URL

    /// Installs the handler in `home`; the script and its mark go in `directory`.
    init(home: URL, directory: URL) throws {
        let files = FileManager.default
        mark = directory.appendingPathComponent("opened-folder")
        let script = directory.appendingPathComponent("file-manager")
        try "#!/bin/sh\nprintf '%s' \"$1\" > '\(mark.path)'\n".write(to: script, atomically: true, encoding: .utf8)
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let applications = home.appendingPathComponent(".local/share/applications")
        try files.createDirectory(at: applications, withIntermediateDirectories: true)
        let entry = "[Desktop Entry]\nType=Application\nName=Files\nExec=\(script.path) %u\nMimeType=inode/directory;\n"
        try entry.write(
            to: applications.appendingPathComponent("haul-test-files.desktop"), atomically: true, encoding: .utf8
        )
        let config = home.appendingPathComponent(".config")
        try files.createDirectory(at: config, withIntermediateDirectories: true)
        try "[Default Applications]\ninode/directory=haul-test-files.desktop\n"
            .write(to: config.appendingPathComponent("mimeapps.list"), atomically: true, encoding: .utf8)
    }

    /// What it was last asked to show (a path or a file: URI), nil before anything.
    var openedFolder: String? { try? String(contentsOf: mark, encoding: .utf8) }
}
