import DBusKit
import Foundation
import HaulContract

/// A task's properties as the CLI shows them.
struct TaskInfo {
    var path: ObjectPath
    var snapshot: TaskSnapshot

    init(path: ObjectPath, properties: [String: DBusValue]) {
        self.path = path
        snapshot = TaskSnapshot(properties: properties)
    }

    init(path: ObjectPath, entries: [DBusDictEntry]) {
        self.path = path
        snapshot = TaskSnapshot(entries: entries)
    }

    var id: UInt32 { snapshot.id }
    var kind: String { snapshot.kind?.rawValue ?? "" }
    var state: String { snapshot.state?.rawValue ?? "" }
    var url: String { snapshot.url }
    var file: String { snapshot.path }
    var application: String { snapshot.application }
    /// ` (firefox)`: who asked, when hauld knows.
    private var byApplication: String { application.isEmpty ? "" : " (\(application))" }
    var errorName: String { snapshot.errorName }
    var errorMessage: String { snapshot.errorMessage }
    var rate: UInt64 { snapshot.rate }
    var isDownload: Bool { snapshot.isDownload }
    var isRunning: Bool { snapshot.isRunning }
    var done: UInt64 { snapshot.bytesDone }
    var expected: Int64 { snapshot.bytesExpected }
    var fraction: Double { snapshot.fraction }
    var isCompleted: Bool { snapshot.isCompleted }
    var succeeded: Bool { outcome == .succeeded }

    /// How a completed task ended: the bus says `completed` for all three, with an error name for two.
    enum Outcome: String {
        case succeeded, failed, cancelled
    }

    var outcome: Outcome? {
        guard isCompleted else { return nil }
        if errorName.isEmpty { return .succeeded }
        return snapshot.failure == .cancelled ? .cancelled : .failed
    }

    /// The state as a person reads it: `queued:slot` with its reason while queued, `completed`, `failed` or
    /// `cancelled` once the task has ended.
    var shownState: String {
        switch outcome {
        case nil: snapshot.waitingFor.isEmpty ? state : "\(state):\(snapshot.waitingFor)"
        case .succeeded: TaskStateName.completed.rawValue
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }

    mutating func apply(_ changes: [String: DBusValue]) {
        snapshot.apply(changes)
    }

    var json: [String: Any] {
        [
            "id": id, "kind": kind, "state": state, "waiting_for": snapshot.waitingFor, "url": url, "path": file,
            "application": application, "bytes": done,
            "expected_bytes": expected, "progress": fraction, "rate": rate, "error_name": errorName,
            "error_message": errorMessage, "http_status": snapshot.httpStatus, "resumable": snapshot.isResumable,
            "outcome": outcome?.rawValue ?? "",
        ]
    }

    /// `  1 running    42%   8.4 MiB/20.0 MiB  4.0 MiB/s  https://… → /home/… (firefox)`
    /// Formatted by hand, as `ls` writes ten thousand of them: `String(format:)` cost more than the rest together.
    var row: String {
        let progress = expected > 0 ? pad(Bytes.rounded(fraction * 100, decimals: 0), -3) + "%" : "  ? "
        let size = "\(Bytes.format(done))/\(expected >= 0 ? Bytes.format(UInt64(expected)) : "?")"
        let speed = isRunning ? "\(Bytes.format(rate))/s" : ""
        let arrow = isDownload ? "\(url) → \(file)" : "\(file) → \(url)"
        let failure = outcome == .failed ? "  (\(errorName.split(separator: ".").last ?? ""): \(shortMessage))" : ""
        // Padded here: swift-corelibs-foundation ignores the width of `%@`.
        let columns = [pad(shownState, 10), progress, " " + pad(size, -19), " " + pad(speed, -11), " " + arrow]
        return pad(String(id), -4) + "  " + columns.joined(separator: " ") + byApplication + failure
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
        let task = "\((isDownload ? TaskKindName.download : .upload).rawValue) \(id)"
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
        if isRunning, rate > 0, expected > 0, UInt64(expected) > done {
            eta = " ETA \(Bytes.duration(Double(UInt64(expected) - done) / Double(rate)))"
        }
        let name = (file as NSString).lastPathComponent
        let percent = expected > 0 ? String(format: " %3.0f%%", fraction * 100) : ""
        let size = " \(Bytes.format(done))" + (expected >= 0 ? "/\(Bytes.format(UInt64(expected)))" : "")
        let speed = isRunning ? " \(Bytes.format(rate))/s" : " \(shownState)"
        return "\(bar)\(percent)\(size)\(speed)\(eta)  #\(id) \(name)\(byApplication)"
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
        return unit == 0 ? "\(bytes) B" : "\(rounded(value, decimals: 1)) \(units[unit])"
    }

    /// `value` with `decimals` (0 or 1) digits after the point, as `%.0f` and `%.1f` write it but for ties (there
    /// rounded away from zero).
    static func rounded(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        let scale = decimals == 0 ? 1.0 : 10.0
        let scaled = Int64((value * scale).rounded())
        if decimals == 0 { return String(scaled) }
        let sign = scaled < 0 ? "-" : ""
        return "\(sign)\(abs(scaled) / 10).\(abs(scaled) % 10)"
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        return total >= 3600 ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}
