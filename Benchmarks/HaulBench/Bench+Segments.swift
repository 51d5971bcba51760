import DBusKit
import Foundation
import HaulContract
import HaulTestSupport

/// Segmented downloads: one file from a server that caps each connection's speed, by hauld with 16 connections,
/// `aria2c -x16 -s16` and curl; and the same file uncapped, by hauld with 8 connections and with 1.
extension Bench {
    func segmentedDownloads() async throws -> SegmentedFigures {
        let capped = server.cappedURL(Workspace.segmentedFile)
        let uncapped = server.url(Workspace.segmentedFile, throttled: false)
        var figures = SegmentedFigures(bytes: settings.segmentedSize, capBytesPerSecond: connectionCap)
        for round in 0..<settings.segmentRounds {
            // Taking turns, so that neither always meets the disk after the other's writes.
            let hauldFirst = round.isMultiple(of: 2)
            if !hauldFirst { figures.aria2Seconds.append(try await aria2(capped, round: round)) }
            figures.hauld16Seconds.append(try await hauldSegmented(capped, connections: 16, round: round))
            if hauldFirst { figures.aria2Seconds.append(try await aria2(capped, round: round)) }
            figures.hauld8Seconds.append(try await hauldSegmented(uncapped, connections: 8, round: round))
            figures.hauld1Seconds.append(try await hauldSegmented(uncapped, connections: 1, round: round))
            try workspace.clearDownloads()
        }
        // One connection at the cap takes bytes / cap seconds: once is enough to show it.
        let curlRun = try await curl([Download(url: capped, path: workspace.curlFile("capped.bin"))], parallel: false)
        figures.curlSeconds = curlRun.synced.seconds
        try workspace.clearDownloads()
        return figures
    }

    /// hauld's time for one download over `connections`, until the file is in place (synced, as hauld does).
    private func hauldSegmented(_ url: String, connections: UInt32, round: Int) async throws -> Double {
        let path = workspace.hauldFile("segmented-\(connections)-\(round).bin")
        let start = ContinuousClock.now
        let task = try await client.calls.download(url, to: path, options: [.connections: .uint32(connections)])
        let completions = try await client.completions(of: [task])
        try await client.forget([task])
        return start.duration(to: completions.map(\.instant).max() ?? start).seconds
    }

    /// aria2c's time with 16 connections and 1 MiB pieces, until its file is synced too.
    private func aria2(_ url: String, round: Int) async throws -> Double {
        let name = "aria2-\(round).bin"
        let start = ContinuousClock.now
        let result = try await Command.run(
            "aria2c",
            ["-x16", "-s16", "-k1M", "--quiet=true", "--allow-overwrite=true", "--auto-file-renaming=false",
             "--no-conf=true", "-d", workspace.curlDownloads.path, "-o", name, url]
        )
        guard result.status == 0 else { throw TestSupportError("aria2c failed (\(result.status)): \(result.stderr)") }
        let fd = open(workspace.curlFile(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestSupportError("aria2c left no file") }
        fsync(fd)
        close(fd)
        return start.duration(to: .now).seconds
    }
}

/// The figures of the segmented phase (seconds per round, each until the file is on disk).
struct SegmentedFigures: Codable, Sendable {
    var bytes: Int
    /// The server's cap per connection.
    var capBytesPerSecond: Int
    var hauld16Seconds: [Double] = []
    var aria2Seconds: [Double] = []
    var curlSeconds: Double = 0
    var hauld8Seconds: [Double] = []
    var hauld1Seconds: [Double] = []

    /// hauld with 16 connections against aria2c with 16 (below 1: hauld is faster).
    var aria2Ratio: Double { Statistics.median(hauld16Seconds) / max(Statistics.median(aria2Seconds), 1e-9) }
    /// 8 connections against 1 on an uncapped server (at most 1.1 allowed).
    var eightToOneRatio: Double { Statistics.median(hauld8Seconds) / max(Statistics.median(hauld1Seconds), 1e-9) }
}
