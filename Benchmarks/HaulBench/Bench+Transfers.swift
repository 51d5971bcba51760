import Foundation
import HaulTestSupport

/// The throughput figures: one large download, then many small ones at once, each beside curl doing the same.
extension Bench {
    /// One large download to disk, `rounds` times.
    func singleDownload() async throws -> SingleDownloadFigures {
        let url = server.url(Workspace.largeFile, throttled: false)
        let (hauldRuns, curlRuns) = try await race(
            hauld: { try await hauldDownloads([Download(url: url, path: workspace.hauldFile("large-\($0).bin"))]) },
            curl: { try await curl([Download(url: url, path: workspace.curlFile("large-\($0).bin"))], parallel: false) }
        )
        return SingleDownloadFigures(bytes: settings.largeSize, rounds: RoundFigures(hauld: hauldRuns, curl: curlRuns))
    }

    /// `transfers` small downloads at once, against `curl --parallel --parallel-max <transfers>`; hauld's peak
    /// memory over the phase, and the signals it emitted meanwhile.
    func concurrentDownloads() async throws -> (ConcurrentFigures, BusLoadFigures) {
        let url = server.url(Workspace.smallFile, throttled: false)
        let count = settings.transfers
        let curlDownloads = (0..<count).map { Download(url: url, path: workspace.curlFile("small-\($0).bin")) }
        let hauldDownloads = (0..<count).map { Download(url: url, path: workspace.hauldFile("small-\($0).bin")) }
        let before = try ProcessSample(pid: pid)
        try ProcessSample.resetPeak(pid: pid)
        let (hauldRuns, curlRuns) = try await race(
            hauld: { _ in try await self.hauldDownloads(hauldDownloads) },
            curl: { _ in try await curl(curlDownloads, parallel: true) }
        )
        let peak = try ProcessSample(pid: pid).peakResidentBytes
        let figures = ConcurrentFigures(
            transfers: count, bytesEach: settings.smallSize, rounds: RoundFigures(hauld: hauldRuns, curl: curlRuns),
            hauldPeakResidentBytes: peak, curlPeakResidentBytes: curlRuns.map(\.peakResidentBytes).max() ?? 0,
            hauldResidentBytesPerTask: max(peak - before.residentBytes, 0) / count
        )
        // The bus load of the median round (the one whose time is reported).
        let median = hauldRuns.sorted { $0.wall < $1.wall }[hauldRuns.count / 2]
        let load = BusLoad.measure(
            client.signals.signals(from: median.start, to: median.end),
            scenario: "\(count) × \(ReportTable.size(settings.smallSize)), full speed",
            tasks: count, from: median.start, to: median.end
        )
        return (figures, load)
    }

    /// The same work by hauld and by curl, `rounds` times (given the round's number); they take turns going first,
    /// and the downloads are cleared after each round.
    private func race(
        hauld: (Int) async throws -> HauldRun, curl: (Int) async throws -> CurlRun
    ) async throws -> ([HauldRun], [CurlRun]) {
        var hauldRuns: [HauldRun] = []
        var curlRuns: [CurlRun] = []
        for round in 0..<settings.rounds {
            let curlFirst = round.isMultiple(of: 2)
            if curlFirst { curlRuns.append(try await curl(round)) }
            hauldRuns.append(try await hauld(round))
            if !curlFirst { curlRuns.append(try await curl(round)) }
            try workspace.clearDownloads()
        }
        return (hauldRuns, curlRuns)
    }
}
