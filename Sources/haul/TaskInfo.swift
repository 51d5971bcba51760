import DBusKit
import Foundation

/// A task's properties as the CLI shows them.
struct TaskInfo {
    var path: ObjectPath
    var properties: [String: DBusValue]

    var id: UInt32 { properties["Id"]?.uint32Value ?? 0 }
    var kind: String { properties["Kind"]?.stringValue ?? "" }
    var state: String { properties["State"]?.stringValue ?? "" }
    var url: String { properties["URL"]?.stringValue ?? "" }
    var file: String { properties["Path"]?.stringValue ?? "" }
    var errorName: String { properties["ErrorName"]?.stringValue ?? "" }
    var errorMessage: String { properties["ErrorMessage"]?.stringValue ?? "" }
    var rate: UInt64 { properties["Rate"]?.uint64Value ?? 0 }
    var isDownload: Bool { kind == "download" }
    var done: UInt64 { properties[isDownload ? "BytesReceived" : "BytesSent"]?.uint64Value ?? 0 }
    var expected: Int64 { properties[isDownload ? "BytesExpectedToReceive" : "BytesExpectedToSend"]?.int64Value ?? -1 }
    var fraction: Double { properties[isDownload ? "DownloadProgress" : "UploadProgress"]?.doubleValue ?? 0 }
    var isCompleted: Bool { state == "completed" }
    var succeeded: Bool { outcome == .succeeded }

    /// How a completed task ended: the bus says `completed` for all three, with an error name for two.
    enum Outcome: String {
        case succeeded, failed, cancelled
    }

    var outcome: Outcome? {
        guard isCompleted else { return nil }
        if errorName.isEmpty { return .succeeded }
        return errorName == "org.haul.Haul1.Error.Cancelled" ? .cancelled : .failed
    }

    /// The state as a person reads it: `completed`, `failed` or `cancelled` once the task has ended.
    var shownState: String {
        switch outcome {
        case nil: state
        case .succeeded: "completed"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }

    mutating func apply(_ changes: [String: DBusValue]) {
        properties.merge(changes.mapValues(\.unwrapped)) { $1 }
    }

    var json: [String: Any] {
        [
            "id": id, "kind": kind, "state": state, "url": url, "path": file, "bytes": done,
            "expected_bytes": expected, "progress": fraction, "rate": rate, "error_name": errorName,
            "error_message": errorMessage, "http_status": properties["HTTPStatus"]?.uint32Value ?? 0,
            "resumable": properties["Resumable"]?.boolValue ?? false, "outcome": outcome?.rawValue ?? "",
        ]
    }

    /// `  1 running    42%   8.4 MiB/20.0 MiB  4.0 MiB/s  https://… → /home/…`
    var row: String {
        let progress = expected > 0 ? String(format: "%3.0f%%", fraction * 100) : "  ? "
        let size = "\(Bytes.format(done))/\(expected >= 0 ? Bytes.format(UInt64(expected)) : "?")"
        let speed = state == "running" ? "\(Bytes.format(rate))/s" : ""
        let arrow = isDownload ? "\(url) → \(file)" : "\(file) → \(url)"
        let failure = outcome == .failed ? "  (\(errorName.split(separator: ".").last ?? ""): \(shortMessage))" : ""
        // Padded here: swift-corelibs-foundation ignores the width of `%@`.
        let columns = [pad(shownState, 10), progress, " " + pad(size, -19), " " + pad(speed, -11), " " + arrow]
        return String(format: "%4u  ", id) + columns.joined(separator: " ") + failure
    }

    /// `text` padded with spaces to `width` characters: after it, or before it for a negative width.
    private func pad(_ text: String, _ width: Int) -> String {
        let fill = String(repeating: " ", count: max(0, abs(width) - text.count))
        return width < 0 ? fill + text : text + fill
    }

    /// The error message cut to one short line for `ls` (`watch` and `--json` give it whole).
    private var shortMessage: String {
        let line = errorMessage.prefix { $0 != "\n" }
        return line.count > 72 || line.count < errorMessage.count ? String(line.prefix(71)) + "…" : String(line)
    }

    /// Throws what `get` and `watch` exit with when the completed task did not succeed, saying e.g.
    /// `download 3 failed: HTTP 404 Not Found (org.haul.Haul1.Error.HTTP)`.
    func throwUnlessSucceeded() throws(CLIFailure) {
        let task = "\(isDownload ? "download" : "upload") \(id)"
        switch outcome {
        case .succeeded, nil: return
        case .failed: throw .taskFailed("\(task) failed: \(errorMessage) (\(errorName))")
        case .cancelled: throw .taskCancelled("\(task) was cancelled")
        }
    }

    /// One line for watching: a bar on a terminal, plain text otherwise.
    func progressLine(width: Int = 28, spinner: Character) -> String {
        let bar: String
        if expected > 0 {
            let filled = Int((fraction * Double(width)).rounded(.down))
            bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
        } else {
            bar = "[" + String(spinner) + String(repeating: " ", count: width - 1) + "]"
        }
        var eta = ""
        if state == "running", rate > 0, expected > 0, UInt64(expected) > done {
            eta = " ETA \(Bytes.duration(Double(UInt64(expected) - done) / Double(rate)))"
        }
        let name = (file as NSString).lastPathComponent
        let percent = expected > 0 ? String(format: " %3.0f%%", fraction * 100) : ""
        let size = " \(Bytes.format(done))" + (expected >= 0 ? "/\(Bytes.format(UInt64(expected)))" : "")
        let speed = state == "running" ? " \(Bytes.format(rate))/s" : " \(shownState)"
        return "\(bar)\(percent)\(size)\(speed)\(eta)  #\(id) \(name)"
    }
}

enum Bytes {
    static func format(_ bytes: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        return total >= 3600 ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}
