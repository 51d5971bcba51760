import Foundation

/// The printed report: every figure beside curl's where curl does the same work, then the targets.
enum ReportTable {
    private struct Row {
        var figure: String
        var hauld: String
        var curl = ""
        var ratio = ""
    }

    static func render(_ results: BenchResults) -> String {
        let machine = results.machine
        var lines = [
            "Haul benchmark, \(results.date): \(machine.cpu), \(machine.cores) cores, "
                + "\(Targets.megabytes(machine.memoryBytes)) RAM, Linux \(machine.kernel); server \(results.server)",
            "",
        ]
        lines += table(rows(results))
        lines += [
            "", "Ratios are hauld/curl; \"+ fsync\" is curl's time until what it wrote is on disk, as hauld's is.", "",
        ]
        lines.append("Targets")
        for check in results.targets {
            lines.append("  \(check.met ? "PASS      " : "FALL SHORT") \(check.target): \(check.measured)")
        }
        lines.append("")
        lines.append(String(format: "Bench ran for %.0f s.", results.benchSeconds))
        return lines.joined(separator: "\n")
    }

    private static func rows(_ results: BenchResults) -> [Row] {
        var rows = [Row(figure: "Figure", hauld: "hauld", curl: "curl", ratio: "hauld/curl")]
        if let single = results.singleDownload {
            let gibibytes = Double(single.bytes) / Double(1 << 30)
            rows += roundRows(
                single.rounds, name: "\(size(single.bytes)) download", curl: "curl", cpu: "CPU per GiB",
                cpuScale: 1 / gibibytes
            )
        }
        if let concurrent = results.concurrent {
            let label = "\(concurrent.transfers) × \(size(concurrent.bytesEach)) at once"
            rows += roundRows(concurrent.rounds, name: label, curl: "curl --parallel", cpu: "CPU (median)", cpuScale: 1)
            rows += [
                Row(
                    figure: "\(label), peak RSS", hauld: Targets.megabytes(concurrent.hauldPeakResidentBytes),
                    curl: Targets.megabytes(concurrent.curlPeakResidentBytes),
                    ratio: ratio(Double(concurrent.hauldPeakResidentBytes) / Double(concurrent.curlPeakResidentBytes))
                ),
                Row(
                    figure: "\(label), RSS per task",
                    hauld: String(format: "%.0f kB", Double(concurrent.hauldResidentBytesPerTask) / 1e3)
                ),
            ]
        }
        if let segmented = results.segmented {
            let label = "\(size(segmented.bytes)), \(segmented.capBytesPerSecond >> 20) MiB/s per connection"
            let seconds = { (values: [Double]) in String(format: "%.2f s", Statistics.median(values)) }
            rows += [
                Row(
                    figure: "\(label): hauld -x16 / aria2c -x16 -s16", hauld: seconds(segmented.hauld16Seconds),
                    curl: seconds(segmented.aria2Seconds), ratio: ratio(segmented.aria2Ratio)
                ),
                Row(
                    figure: "\(label): hauld -x16 / curl", hauld: seconds(segmented.hauld16Seconds),
                    curl: String(format: "%.2f s", segmented.curlSeconds),
                    ratio: ratio(Statistics.median(segmented.hauld16Seconds) / max(segmented.curlSeconds, 1e-9))
                ),
                Row(
                    figure: "\(size(segmented.bytes)) uncapped: hauld -x8 / hauld -x1",
                    hauld: seconds(segmented.hauld8Seconds), curl: seconds(segmented.hauld1Seconds),
                    ratio: ratio(segmented.eightToOneRatio)
                ),
            ]
        }
        if let limits = results.rateLimits {
            rows += rateLimitRows(limits)
        }
        if let fresh = results.hauldFresh {
            rows.append(Row(figure: "Fresh hauld, RSS / anonymous / PSS", hauld: memory(fresh)))
        }
        if let abuse = results.abuse {
            rows += abuseLines(abuse).map { Row(figure: $0.0, hauld: $0.1) }
        }
        if let idle = results.idle {
            rows += [
                Row(
                    figure: "Idle \(Int(idle.seconds.rounded())) s after the load, CPU",
                    hauld: String(format: "%.2f ms", idle.cpuSeconds * 1000)
                ),
                Row(
                    figure: "  counted from (its pooled connections closed at)",
                    hauld: String(format: "%.0f s (%.0f s)", idle.startSeconds, idle.connectionsClosedSeconds)
                ),
                Row(
                    figure: "  wake-ups (voluntary context switches) / signals",
                    hauld: "\(idle.wakeups) / \(idle.signals)"
                ),
                Row(figure: "  RSS / anonymous / PSS", hauld: memory(idle.memory)),
            ]
        }
        for load in results.busLoad {
            rows += [
                Row(
                    figure: "Bus load, \(load.scenario): signals/s",
                    hauld: String(format: "%.0f", load.signalsPerSecond)),
                Row(
                    figure: "  PropertiesChanged per task per second (mean / most in 1 s)",
                    hauld: String(
                        format: "%.2f / %d", load.taskPropertySignalsPerTaskPerSecond,
                        load.maxTaskPropertySignalsInOneSecond)
                ),
            ]
        }
        if let control = results.control {
            rows += [
                Row(
                    figure: "Suspend round trip p50 / p99, \(control.tasksInFlight) in flight",
                    hauld: milliseconds(control.suspend)
                ),
                Row(
                    figure: "Resume round trip p50 / p99, \(control.tasksInFlight) in flight",
                    hauld: milliseconds(control.resume)
                ),
            ]
        }
        if let scale = results.scale {
            rows += scaleRows(scale)
        }
        if let indicator = results.indicator {
            rows += [
                Row(
                    figure: String(
                        format: "Indicator activation (%.2f s) error p50 / p99", indicator.activationDelaySeconds),
                    hauld: milliseconds(indicator.activationError)
                ),
                Row(
                    figure: String(
                        format: "Indicator completion (%.2f s) error p50 / p99", indicator.completionDelaySeconds),
                    hauld: milliseconds(indicator.completionError)
                ),
            ]
        }
        return rows
    }

    /// Ten thousand tasks: creating, listing, the `*All` calls, memory, stopping and starting again.
    private static func scaleRows(_ scale: ScaleFigures) -> [Row] {
        let label = "\(scale.tasks) tasks"
        let ms = { (value: Double) in String(format: "%.0f ms", value) }
        return [
            Row(
                figure: "\(label): created from \(scale.clients) clients (start-suspended)",
                hauld: String(format: "%.0f/s", scale.creationPerSecond)
            ),
            Row(figure: "\(label): GetManagedObjects (median of 5)", hauld: ms(scale.managedObjectsMilliseconds)),
            Row(
                figure: "\(label): GetManagedObjects of \(Targets.megabytes(scale.managedObjectsBytes)), nothing decoded: "
                    + "from hauld / replayed (the bus alone)",
                hauld: ms(scale.managedObjectsUndecodedMilliseconds) + " / " + ms(scale.managedObjectsReplayedMilliseconds)
            ),
            Row(figure: "\(label): haul ls (median of 3)", hauld: ms(scale.listMilliseconds)),
            Row(
                figure: "\(label): RSS, created / after a restart",
                hauld: Targets.megabytes(scale.residentBytes) + " / " + Targets.megabytes(scale.restartedResidentBytes)
            ),
            Row(
                figure: "\(label): ResumeAll / SuspendAll, twice",
                hauld: [scale.resumeAllMilliseconds, scale.suspendAllMilliseconds, scale.resumeAgainMilliseconds,
                    scale.suspendAgainMilliseconds].map(ms).joined(separator: " / ")
            ),
            Row(
                figure: "\(label): most transfers at the server at once (MaxRunningTasks \(scale.maxRunningTasks))",
                hauld: "\(scale.mostConnectionsAtOnce)"
            ),
            Row(
                figure: "\(label): slowest answer to another client, during the *All / after a restart",
                hauld: ms(scale.slowestAnswerDuringAllMilliseconds) + " / "
                    + ms(scale.slowestAnswerAfterRestartMilliseconds)
            ),
            Row(figure: "\(label): CancelAll", hauld: ms(scale.cancelAllMilliseconds)),
            Row(figure: "\(label): SIGTERM to exit", hauld: ms(scale.sigtermExitMilliseconds)),
            Row(
                figure: "\(label): restart to the bus name / to the first answer",
                hauld: ms(scale.restartToNameMilliseconds) + " / " + ms(scale.restartToAnswerMilliseconds)
            ),
        ]
    }

    /// The rates on the wire over the steady part, beside the limit; CPU and wake-ups per GiB beside curl's at the
    /// same limit, and hauld's CPU per GiB unlimited.
    private static func rateLimitRows(_ limits: RateLimitFigures) -> [Row] {
        let (single, segmented, shared) = (limits.single, limits.segmented, limits.shared)
        let steady = String(format: "%.0f–%.0f s", single.fromSeconds, single.toSeconds)
        let connections = "\(limits.segmentedConnections) connections"
        func wire(_ label: String, _ run: LimitedRunFigures) -> Row {
            Row(figure: label, hauld: "\(rate(run.rate, of: run)) (\(rate(run.worstWindowRate, of: run)))")
        }
        func cost(_ label: String, _ cost: CostBesideCurl) -> [Row] {
            [
                Row(
                    figure: "\(label): CPU per GiB, curl --limit-rate", hauld: seconds(cost.hauld.cpuSecondsPerGiB),
                    curl: seconds(cost.curl.cpuSecondsPerGiB), ratio: ratio(cost.cpuRatio)
                ),
                Row(
                    figure: "  wake-ups (voluntary context switches) per GiB",
                    hauld: String(format: "%.0f", cost.hauld.wakeupsPerGiB),
                    curl: String(format: "%.0f", cost.curl.wakeupsPerGiB), ratio: ratio(cost.wakeupRatio)
                ),
                Row(
                    figure: "  preemptions (involuntary ones) per GiB",
                    hauld: String(format: "%.0f", cost.hauld.preemptionsPerGiB),
                    curl: String(format: "%.0f", cost.curl.preemptionsPerGiB), ratio: ratio(cost.preemptionRatio)
                ),
            ]
        }
        var rows = [
            wire("Rate limit \(size(single.limit))/s, 1 task, \(steady) on the wire (worst 10 s)", single),
            wire("Rate limit \(size(segmented.limit))/s, 1 task over \(connections) (worst 10 s)", segmented),
            wire("Rate limit \(size(shared.limit))/s shared by \(shared.tasks), total (worst 10 s)", shared),
            Row(
                figure: "  each task, against an equal share",
                hauld: shared.connectionRates.map { String(format: "%.3f", $0 / Double(1 << 20)) }
                    .joined(separator: " / ") + " MiB/s"
            ),
        ]
        rows += cost("\(size(single.limit))/s, 1 task", limits.singleCost)
        rows.append(
            Row(
                figure: "  curl's wake-ups per GiB, each of its runs (the median above)", hauld: "",
                curl: limits.curlSingleRuns.map { String(format: "%.0f", $0.wakeupsPerGiB) }.joined(separator: " / ")
            )
        )
        rows += cost("\(size(single.limit))/s, \(connections) (curl: 1)", limits.segmentedCost)
        rows += cost("\(size(shared.limit))/s shared by \(shared.tasks) (\(shared.tasks) curls)", limits.sharedCost)
        rows += [
            Row(
                figure: "Unlimited, 1 task: CPU / wake-ups per GiB (median of \(limits.unlimitedCPUSecondsPerGiB.count))",
                hauld: String(
                    format: "%.2f s / %.0f", Statistics.median(limits.unlimitedCPUSecondsPerGiB),
                    Statistics.median(limits.unlimitedWakeupsPerGiB)
                )
            ),
            Row(
                figure: "  CPU per GiB at \(size(single.limit))/s / unlimited",
                hauld: String(format: "%.2f×", limits.cpuRatio)
            ),
        ]
        return rows
    }

    /// `5.012 MiB/s, +0.2 %`.
    static func rate(_ bytesPerSecond: Double, of run: LimitedRunFigures) -> String {
        String(format: "%.3f MiB/s, %+.1f %%", bytesPerSecond / Double(1 << 20), run.deviation(bytesPerSecond) * 100)
    }

    /// Wall time and CPU (times `cpuScale`) of hauld beside curl's with its fsync, then beside curl's alone.
    private static func roundRows(
        _ rounds: RoundFigures, name: String, curl: String, cpu: String, cpuScale: Double
    ) -> [Row] {
        [
            Row(
                figure: "\(name), wall (median of \(rounds.hauldSeconds.count)), \(curl) + fsync",
                hauld: seconds(rounds.hauldMedianSeconds), curl: seconds(rounds.curlSyncedMedianSeconds),
                ratio: ratio(rounds.wallRatio)
            ),
            Row(
                figure: "  \(curl) alone (its data still in the page cache)", hauld: "",
                curl: seconds(rounds.curlMedianSeconds), ratio: ratio(rounds.wallRatioUnsynced)
            ),
            Row(
                figure: "\(name), \(cpu), curl + fsync", hauld: seconds(rounds.hauldMedianCPUSeconds * cpuScale),
                curl: seconds(rounds.curlSyncedMedianCPUSeconds * cpuScale), ratio: ratio(rounds.cpuRatio)
            ),
            Row(
                figure: "  \(curl) alone", hauld: "", curl: seconds(rounds.curlMedianCPUSeconds * cpuScale),
                ratio: ratio(rounds.cpuRatioUnsynced)
            ),
        ]
    }

    private static func table(_ rows: [Row]) -> [String] {
        let widths = [
            rows.map(\.figure.count).max() ?? 0, rows.map(\.hauld.count).max() ?? 0,
            rows.map(\.curl.count).max() ?? 0,
        ]
        return rows.map { row in
            let cells = [
                row.figure.padded(widths[0]), row.hauld.padded(widths[1]), row.curl.padded(widths[2]), row.ratio,
            ]
            return String(cells.joined(separator: "  ").reversed().drop { $0 == " " }.reversed())
        }
    }

    /// `1 GiB`, `5 MiB`.
    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 30 && bytes % (1 << 30) == 0 ? "\(bytes >> 30) GiB" : "\(bytes >> 20) MiB"
    }

    private static func memory(_ figures: MemoryFigures) -> String {
        String(
            format: "%.1f / %.1f / %.1f MB", Double(figures.residentBytes) / 1e6, Double(figures.anonymousBytes) / 1e6,
            Double(figures.proportionalBytes) / 1e6
        )
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }
    private static func ratio(_ value: Double) -> String { String(format: "%.2f", value) }
    private static func milliseconds(_ latencies: Latencies) -> String {
        String(format: "%.1f / %.1f ms", latencies.p50, latencies.p99)
    }
}

extension String {
    fileprivate func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
