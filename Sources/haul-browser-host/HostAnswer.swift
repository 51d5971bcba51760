import FoundationEssentials

/// The host's answer to one message: `{"ok": true, "task": …, "path": …}`, or
/// `{"ok": false, "error": …, "message": …}` with a D-Bus error name (or one of the host's own) and a sentence.
/// Never holds a cookie.
struct HostAnswer: Encodable, Equatable {
    let ok: Bool
    /// The task's object path.
    var task: String?
    /// The task's `Path`: the download folder until hauld names the file.
    var path: String?
    var error: String?
    var message: String?

    static func taken(task: String, path: String) -> HostAnswer {
        HostAnswer(ok: true, task: task, path: path)
    }

    static func done(task: String) -> HostAnswer { HostAnswer(ok: true, task: task) }

    static func failed(_ error: String, _ message: String) -> HostAnswer {
        HostAnswer(ok: false, error: error, message: message)
    }

    /// The host's own error names, for failures that are not hauld's.
    enum HostError {
        static let malformed = "org.haul.haul.Malformed"
        static let oversized = "org.haul.haul.Oversized"
        static let truncated = "org.haul.haul.Truncated"
        static let timeout = "org.haul.haul.Timeout"
    }

    var json: [UInt8] {
        // Encoding strings and booleans cannot fail; the fallback keeps the frame valid all the same.
        (try? Array(JSONEncoder().encode(self))) ?? Array(#"{"ok":false}"#.utf8)
    }
}
