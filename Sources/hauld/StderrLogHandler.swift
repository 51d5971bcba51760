import FoundationEssentials
import Glibc
import HaulCore
import Logging

/// Writes one line per message to stderr. Under systemd (`JOURNAL_STREAM` set) each line starts with its
/// syslog priority (`<3>` … `<7>`), so `journalctl -p warning` filters by level and the journal adds the time.
struct StderrLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    let label: String
    let journal: Bool

    init(label: String, journal: Bool) {
        self.label = label
        self.journal = journal
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(event.message)\(details)\n"
        } else {
            let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
            line = "\(time) \(event.level.rawValue.uppercased()) \(label): \(event.message)\(details)\n"
        }
        Self.write(line)
    }

    /// The whole line in one call where the pipe takes it; a failure (stderr gone) has nobody left to tell.
    static func write(_ line: String) {
        _ = Array(line.utf8).withUnsafeBytes { AtomicFile.writeAll($0, to: STDERR_FILENO) }
    }

    /// syslog priorities of RFC 5424, as sd-daemon(3) reads them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
