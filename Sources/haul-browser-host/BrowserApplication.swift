import Glibc

/// The desktop-file id of the browser that started the host, for the task's `Application`: the browser runs the
/// host itself, so it is the host's parent process.
enum BrowserApplication {
    /// Executables whose desktop-file id differs from their own name, as Debian installs them.
    private static let knownIDs: [(pathPrefix: String, id: String)] = [
        ("/usr/lib/chromium/", "chromium"),
        ("/opt/google/chrome/", "google-chrome"),
        ("/opt/google/chrome-beta/", "google-chrome-beta"),
        ("/opt/google/chrome-unstable/", "google-chrome-unstable"),
        ("/usr/lib/firefox-esr/", "firefox-esr"),
        ("/usr/lib/firefox/", "firefox"),
    ]

    /// The id for the executable at `path`: a known browser's, else the executable's name when it is a usable id.
    static func id(ofExecutable path: String) -> String {
        if let known = knownIDs.first(where: { path.hasPrefix($0.pathPrefix) }) { return known.id }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let usable = !name.isEmpty && name.utf8.count <= 255
            && name.unicodeScalars.allSatisfy { !$0.properties.isWhitespace && $0.value >= 0x20 && $0.value != 0x7F }
        return usable ? name : ""
    }

    /// The id of this process's parent, or "" when it cannot be read.
    static func ofParent() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(getppid())/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return id(ofExecutable: path)
    }
}
