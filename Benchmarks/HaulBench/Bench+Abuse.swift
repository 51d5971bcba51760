import DBusKit
import Foundation
import HaulTestSupport

/// Memory that comes back after abuse: a fresh hauld, a barrage of about 6,500 hostile calls from a client of its own
/// (`HostileBarrage`: huge strings, deep variants, wrong types, hostile URLs, paths and options, a burst of parallel
/// calls), every task it created cancelled and forgotten, then a minute without calls.
extension Bench {
    /// How long after the last call the memory is judged.
    static let abuseQuietSeconds = 60.0

    func abuse() async throws -> AbuseFigures {
        let folder = workspace.root.appendingPathComponent("abuse")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let upload = folder.appendingPathComponent("upload.bin")
        try Data(repeating: 7, count: 4096).write(to: upload)
        let barrage = HostileBarrage(folder: folder.path, uploadFile: upload.path)

        let before = try ProcessSample(pid: pid)
        let start = ContinuousClock.now
        let hostile = try await DBusConnection.connect(address: busAddress)
        try await barrage.send(on: hostile)
        await hostile.close()
        let lastCall = ContinuousClock.now
        let afterBarrage = try ProcessSample(pid: pid)
        // Sampled every second: when the resident set came back within 5 MB of where it began.
        var cameBack: Double?
        while lastCall.duration(to: .now).seconds < Self.abuseQuietSeconds {
            try await Task.sleep(for: .seconds(1))
            if cameBack == nil, try ProcessSample(pid: pid).residentBytes <= before.residentBytes + 5_000_000 {
                cameBack = lastCall.duration(to: .now).seconds
            }
        }
        let after = try ProcessSample(pid: pid)
        try? FileManager.default.removeItem(at: folder)
        return AbuseFigures(
            calls: barrage.callCount, seconds: start.duration(to: lastCall).seconds, before: MemoryFigures(before),
            afterBarrage: MemoryFigures(afterBarrage), afterQuiet: MemoryFigures(after),
            quietSeconds: Self.abuseQuietSeconds, cameBackSeconds: cameBack
        )
    }
}

struct AbuseFigures: Codable, Sendable {
    var calls: Int
    /// How long the barrage took.
    var seconds: Double
    var before: MemoryFigures
    /// Right after the last call.
    var afterBarrage: MemoryFigures
    /// `quietSeconds` after it.
    var afterQuiet: MemoryFigures
    var quietSeconds: Double
    /// When the resident set came back within 5 MB of where it began, if it did.
    var cameBackSeconds: Double?
}

extension ReportTable {
    static func abuseLines(_ abuse: AbuseFigures) -> [(String, String)] {
        let memory = { (figures: MemoryFigures) in
            String(
                format: "%.1f / %.1f MB", Double(figures.residentBytes) / 1e6, Double(figures.anonymousBytes) / 1e6)
        }
        return [
            ("Hostile barrage, \(abuse.calls) calls in \(String(format: "%.0f", abuse.seconds)) s: RSS / anonymous",
                "\(memory(abuse.before)) → \(memory(abuse.afterBarrage))"),
            ("  \(Int(abuse.quietSeconds)) s after the last call (back within 5 MB after)",
                "\(memory(abuse.afterQuiet)) (" + (abuse.cameBackSeconds.map { String(format: "%.0f s", $0) } ?? "never")
                    + ")"),
        ]
    }
}

extension Targets {
    static func abuseChecks(_ abuse: AbuseFigures) -> [TargetCheck] {
        let grown = abuse.afterQuiet.residentBytes - abuse.before.residentBytes
        return [
            TargetCheck(
                target: "RSS \(Int(abuse.quietSeconds)) s after a hostile barrage ≤ fresh + 5 MB",
                measured: "\(megabytes(abuse.afterQuiet.residentBytes)) against \(megabytes(abuse.before.residentBytes)) "
                    + String(format: "(%+.1f MB; %.1f MB right after the barrage)", Double(grown) / 1e6,
                        Double(abuse.afterBarrage.residentBytes) / 1e6),
                met: grown <= 5_000_000
            )
        ]
    }
}
