import Foundation

/// The throughput figures: one large download, then many small ones at once, each beside curl doing the same.
extension Bench {
    /// One large download to disk, `rounds` times; curl and hauld take turns going first.
    func singleDownload() async throws -> SingleDownloadFigures {
        let url = server.url(Workspace.largeFile, throttled: false)
        var curlRuns: [CurlRun] = []
        var hauldRuns: [HauldRun] = []
        for round in 0..<settings.rounds {
            let name = "large-\(round).bin"
            let curlFirst = round.isMultiple(of: 2)
            if curlFirst {
                curlRuns.append(try await curl([Download(url: url, path: workspace.curlFile(name))], parallel: false))
            }
            hauldRuns.append(try await hauldDownloads([Download(url: url, path: workspace.hauldFile(name))]))
            if !curlFirst {
                curlRuns.append(try await curl([Download(url: url, path: workspace.curlFile(name))], parallel: false))
            }
            try workspace.clearDownloads()
        }
        let gibibytes = Double(settings.largeSize) / Double(1 << 30)
        let hauld = Statistics.median(hauldRuns.map(\.wall.seconds))
        let curl = Statistics.median(curlRuns.map(\.wall.seconds))
        let curlSynced = Statistics.median(curlRuns.map(\.synced.seconds))
        let hauldCPU = Statistics.median(hauldRuns.map(\.cpu.seconds)) / gibibytes
        let curlCPU = Statistics.median(curlRuns.map(\.cpu.seconds)) / gibibytes
        let curlSyncedCPU = Statistics.median(curlRuns.map(\.syncedCPU.seconds)) / gibibytes
        return SingleDownloadFigures(
            bytes: settings.largeSize,
            hauldSeconds: hauldRuns.map(\.wall.seconds), curlSeconds: curlRuns.map(\.wall.seconds),
            curlSyncedSeconds: curlRuns.map(\.synced.seconds),
            hauldCPUSeconds: hauldRuns.map(\.cpu.seconds), curlCPUSeconds: curlRuns.map(\.cpu.seconds),
            curlSyncedCPUSeconds: curlRuns.map(\.syncedCPU.seconds),
            hauldMedianSeconds: hauld, curlSyncedMedianSeconds: curlSynced, curlMedianSeconds: curl,
            wallRatio: hauld / curlSynced, wallRatioUnsynced: hauld / curl,
            hauldCPUSecondsPerGiB: hauldCPU, curlSyncedCPUSecondsPerGiB: curlSyncedCPU, curlCPUSecondsPerGiB: curlCPU,
            cpuRatio: hauldCPU / curlSyncedCPU, cpuRatioUnsynced: hauldCPU / curlCPU
        )
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
        var curlRuns: [CurlRun] = []
        var hauldRuns: [HauldRun] = []
        for round in 0..<settings.rounds {
            let curlFirst = round.isMultiple(of: 2)
            if curlFirst { curlRuns.append(try await curl(curlDownloads, parallel: true)) }
            hauldRuns.append(try await self.hauldDownloads(hauldDownloads))
            if !curlFirst { curlRuns.append(try await curl(curlDownloads, parallel: true)) }
            try workspace.clearDownloads()
        }
        let peak = try ProcessSample(pid: pid).peakResidentBytes
        let hauld = Statistics.median(hauldRuns.map(\.wall.seconds))
        let curl = Statistics.median(curlRuns.map(\.wall.seconds))
        let curlSynced = Statistics.median(curlRuns.map(\.synced.seconds))
        let figures = ConcurrentFigures(
            transfers: count, bytesEach: settings.smallSize,
            hauldSeconds: hauldRuns.map(\.wall.seconds), curlSeconds: curlRuns.map(\.wall.seconds),
            curlSyncedSeconds: curlRuns.map(\.synced.seconds),
            hauldCPUSeconds: hauldRuns.map(\.cpu.seconds), curlCPUSeconds: curlRuns.map(\.cpu.seconds),
            curlSyncedCPUSeconds: curlRuns.map(\.syncedCPU.seconds),
            hauldMedianSeconds: hauld, curlSyncedMedianSeconds: curlSynced, curlMedianSeconds: curl,
            wallRatio: hauld / curlSynced, wallRatioUnsynced: hauld / curl,
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
}
