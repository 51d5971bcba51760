import Foundation

/// The targets of issues #6, #13, #14 and #21, judged against a run's figures.
enum Targets {
    static func check(_ results: BenchResults) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        func add(_ target: String, _ measured: String, _ met: Bool) {
            checks.append(TargetCheck(target: target, measured: measured, met: met))
        }
        /// Two series of timings, each of whose 99th percentile must stay within `limit` milliseconds.
        func addP99(_ target: String, _ first: (String, Latencies), _ second: (String, Latencies), _ limit: Double) {
            add(
                target, "\(first.0) \(format(first.1.p99)) ms, \(second.0) \(format(second.1.p99)) ms",
                max(first.1.p99, second.1.p99) <= limit
            )
        }
        if let single = results.singleDownload?.rounds, let bytes = results.singleDownload?.bytes {
            let throughput = 1 / single.wallRatio
            add(
                "\(ReportTable.size(bytes)) download: throughput ≥ 1.0× curl (+ fsync)",
                "\(format(throughput))× (\(format(1 / single.wallRatioUnsynced))× curl without fsync)",
                throughput >= 1
            )
            add(
                "\(ReportTable.size(bytes)) download: CPU ≤ 1.2× curl's (+ fsync)",
                "\(format(single.cpuRatio))× (\(format(single.cpuRatioUnsynced))× curl without fsync)",
                single.cpuRatio <= 1.2
            )
        }
        if let concurrent = results.concurrent {
            let throughput = 1 / concurrent.rounds.wallRatio
            add(
                "\(concurrent.transfers) concurrent: ≥ 0.9× curl --parallel (+ fsync)",
                "\(format(throughput))× (\(format(1 / concurrent.rounds.wallRatioUnsynced))× without fsync)",
                throughput >= 0.9
            )
            add(
                "\(concurrent.transfers) concurrent: peak RSS ≤ 60 MB", megabytes(concurrent.hauldPeakResidentBytes),
                concurrent.hauldPeakResidentBytes <= 60_000_000
            )
        }
        if let segmented = results.segmented {
            add(
                "\(ReportTable.size(segmented.bytes)) capped per connection: hauld -x16 at least as fast as aria2c -x16 -s16",
                "\(format(1 / segmented.aria2Ratio))× aria2c's speed (curl, one connection: "
                    + "\(format(segmented.curlSeconds)) s)",
                segmented.aria2Ratio <= 1
            )
            add(
                "uncapped: 8 connections no more than 10 % slower than 1",
                "\(format(segmented.eightToOneRatio))× the time of one connection",
                segmented.eightToOneRatio <= 1.1
            )
        }
        if let limits = results.rateLimits {
            checks += rateLimitChecks(limits)
        }
        // An idle hauld weighs at most 20 MB, fresh and after the load (issue #14).
        func addIdleMemory(_ target: String, _ memory: MemoryFigures) {
            add(
                target,
                "\(megabytes(memory.residentBytes)) (\(megabytes(memory.anonymousBytes)) of it anonymous, PSS "
                    + "\(megabytes(memory.proportionalBytes)))",
                memory.residentBytes <= 20_000_000
            )
        }
        if let abuse = results.abuse {
            checks += abuseChecks(abuse)
        }
        if let fresh = results.hauldFresh {
            addIdleMemory("idle RSS ≤ 20 MB, fresh", fresh)
        }
        if let idle = results.idle {
            addIdleMemory("idle RSS ≤ 20 MB, after the load", idle.memory)
            add(
                "idle CPU 0 over \(Int(idle.seconds.rounded())) s",
                "\(format(idle.cpuSeconds * 1000)) ms (\(idle.wakeups) wake-ups, \(idle.signals) signals)",
                idle.cpuSeconds == 0
            )
        }
        if let worst = results.busLoad.max(by: {
            $0.maxTaskPropertySignalsInOneSecond < $1.maxTaskPropertySignalsInOneSecond
        }) {
            add(
                "≤ 10 PropertiesChanged per task per second",
                "at most \(worst.maxTaskPropertySignalsInOneSecond) in any second (\(worst.scenario))",
                worst.maxTaskPropertySignalsInOneSecond <= 10
            )
        }
        if let control = results.control {
            addP99("Suspend/Resume p99 ≤ 10 ms under load", ("Suspend", control.suspend), ("Resume", control.resume), 10)
        }
        if let scale = results.scale {
            let tasks = "\(scale.tasks) tasks"
            let ms = { (value: Double) in "\(format(value)) ms" }
            add("\(tasks): restart to the first answer ≤ 1 s", ms(scale.restartToAnswerMilliseconds),
                scale.restartToAnswerMilliseconds <= 1000)
            add("\(tasks): GetManagedObjects ≤ 300 ms", ms(scale.managedObjectsMilliseconds),
                scale.managedObjectsMilliseconds <= 300)
            add("\(tasks): haul ls ≤ 1 s", ms(scale.listMilliseconds), scale.listMilliseconds <= 1000)
            let all = [scale.resumeAllMilliseconds, scale.suspendAllMilliseconds, scale.resumeAgainMilliseconds,
                scale.suspendAgainMilliseconds, scale.cancelAllMilliseconds]
            add("\(tasks): ResumeAll, SuspendAll, CancelAll ≤ 1 s each", "slowest " + ms(all.max() ?? 0),
                (all.max() ?? 0) <= 1000)
            let slowest = max(scale.slowestAnswerDuringAllMilliseconds, scale.slowestAnswerAfterRestartMilliseconds)
            add("\(tasks): no call waits more than 100 ms behind a *All or a restore", "slowest " + ms(slowest),
                slowest <= 100)
            add("\(tasks): at most MaxRunningTasks transfers at the server at once",
                "\(scale.mostConnectionsAtOnce) (MaxRunningTasks \(scale.maxRunningTasks))",
                scale.maxRunningTasks == 0 || scale.mostConnectionsAtOnce <= scale.maxRunningTasks)
            add("\(tasks): creation ≥ 1,000 tasks/s from \(scale.clients) clients",
                String(format: "%.0f/s", scale.creationPerSecond), scale.creationPerSecond >= 1000)
            // Once created, and after a restart on the same state.
            let resident = max(scale.residentBytes, scale.restartedResidentBytes)
            add("\(tasks): RSS ≤ 60 MB, created and restarted", megabytes(resident), resident <= 60_000_000)
            add("\(tasks): SIGTERM exits within 2 s", ms(scale.sigtermExitMilliseconds),
                scale.sigtermExitMilliseconds <= 2000)
        }
        if let indicator = results.indicator {
            addP99(
                "indicator delays within 20 ms p99", ("activation", indicator.activationError),
                ("completion", indicator.completionError), 20
            )
        }
        return checks
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }
    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
}
