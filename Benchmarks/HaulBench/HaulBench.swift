import ArgumentParser
import Foundation
import HaulTestSupport

/// `make bench`: hauld beside curl on a loopback server, on a private bus. Prints a table, writes a JSON file.
@main
struct HaulBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul-bench",
        abstract: "Measures hauld against curl on a loopback HTTP server and a private bus.",
        discussion: """
            Starts nginx (or, without it, the test suite's Python server) on 127.0.0.1, a private dbus-daemon and \
            the hauld built beside this program, then measures throughput, CPU, memory, bus load, control latency \
            and indicator timing. Files live in a temporary folder ($TMPDIR), removed at the end.
            """
    )

    @Option(help: "Where to write the figures as JSON.")
    var output = ".build/bench/results.json"

    @Option(help: "Server: nginx or python (default: nginx when installed).")
    var server: ServerKind?

    @Option(help: "Repetitions of each throughput figure (the median is reported).")
    var rounds = 5

    @Option(help: "Downloads at once in the concurrent and control phases.")
    var transfers = 200

    @Option(name: .customLong("large-mib"), help: "Size of the single download, in MiB.")
    var largeMiB = 1024

    @Option(name: .customLong("small-mib"), help: "Size of each concurrent download, in MiB.")
    var smallMiB = 5

    @Option(help: "Suspend/Resume pairs timed under load.")
    var controlSamples = 200

    @Option(help: "Indicator activations (and completions) timed.")
    var indicatorRepetitions = 20

    @Option(help: "Seconds hauld is watched while idle.")
    var idleSeconds = 60

    @Option(name: .customLong("segmented-mib"), help: "Size of the segmented phase's file, in MiB.")
    var segmentedMiB = 200

    @Option(help: "Rounds of the segmented phase (each: hauld -x16 and aria2c capped, hauld -x8 and -x1 uncapped).")
    var segmentRounds = 3

    @Option(help: "Tasks of the scale phase.")
    var scaleTasks = 10_000

    @Option(
        parsing: .upToNextOption,
        help: """
            Phases to run (default: all): indicator, single, concurrent, segmented, ratelimit, control, idle, \
            scale. \
            For profiling one.
            """
    )
    var phases: [Phase] = Phase.allCases

    enum ServerKind: String, ExpressibleByArgument { case nginx, python }
    enum Phase: String, CaseIterable, ExpressibleByArgument {
        case indicator, single, concurrent, segmented, ratelimit, control, idle, scale
    }

    func validate() throws {
        guard rounds > 0, transfers > 0, largeMiB > 0, smallMiB > 0, controlSamples > 0, indicatorRepetitions > 0,
            idleSeconds >= 0, segmentedMiB > 0, segmentRounds > 0, scaleTasks > 0
        else { throw ValidationError("every count and size must be positive") }
    }

    func run() async throws {
        let began = ContinuousClock.now
        let settings = Bench.Settings(
            rounds: rounds, transfers: transfers, largeSize: largeMiB << 20, smallSize: smallMiB << 20,
            controlSamples: controlSamples, indicatorRepetitions: indicatorRepetitions, idleSeconds: idleSeconds,
            segmentedSize: segmentedMiB << 20, segmentRounds: segmentRounds, scaleTasks: scaleTasks
        )
        log("writing the files to serve")
        // Only the files the chosen phases download are written (the large one alone is a GiB).
        let workspace = try Workspace(
            largeSize: phases.contains(.single) ? settings.largeSize : 0, smallSize: settings.smallSize,
            segmentedSize: phases.contains(.segmented) ? settings.segmentedSize : 0,
            rateLimited: phases.contains(.ratelimit)
        )
        defer { workspace.remove() }
        let fileServer = try await startServer(workspace)
        defer { fileServer.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let hauld = try await HauldProcess(bus: bus, arguments: ["--log-level", "warning"])
        let client = try await HauldClient.connect(address: bus.address)
        let bench = Bench(settings: settings, workspace: workspace, server: fileServer, hauld: hauld, client: client)

        var results = BenchResults(date: Self.today(), machine: .current(), server: fileServer.name)
        log("hauld runs as pid \(hauld.pid)")
        do {
            try await Task.sleep(for: .seconds(1))
            results.hauldFresh = MemoryFigures(try ProcessSample(pid: hauld.pid))
            if phases.contains(.indicator) {
                log("indicator timing (\(indicatorRepetitions) activations)")
                results.indicator = try await bench.indicatorAccuracy()
            }
            if phases.contains(.single) {
                log("\(largeMiB) MiB download, \(rounds) rounds each")
                results.singleDownload = try await bench.singleDownload()
            }
            if phases.contains(.concurrent) {
                log("\(transfers) × \(smallMiB) MiB at once, \(rounds) rounds each")
                let (concurrent, fullSpeedLoad) = try await bench.concurrentDownloads()
                results.concurrent = concurrent
                results.busLoad.append(fullSpeedLoad)
            }
            if phases.contains(.segmented) {
                log("\(segmentedMiB) MiB in segments: capped at \(connectionCap >> 20) MiB/s per connection, and not")
                results.segmented = try await bench.segmentedDownloads()
            }
            if phases.contains(.ratelimit) {
                log("rate limits: 1 task at \(Bench.taskLimit >> 20) MiB/s, \(Bench.sharingTasks) sharing "
                    + "\(Bench.globalLimit >> 20) MiB/s, \(rounds) unlimited rounds for the CPU")
                results.rateLimits = try await bench.rateLimits()
            }
            if phases.contains(.control) {
                log("Suspend/Resume with \(transfers) throttled downloads in flight")
                let (control, throttledLoad) = try await bench.controlLatency()
                results.control = control
                results.busLoad.append(throttledLoad)
            }
            if phases.contains(.idle) {
                log("idle for \(idleSeconds) s, once its pooled connections are closed")
                results.idle = try await bench.idle()
            }
            if phases.contains(.scale) {
                log("\(scaleTasks) tasks on a hauld of their own")
                results.scale = try await bench.scale()
            }
        } catch {
            await client.close()
            _ = await hauld.stop()
            throw error
        }
        await client.close()
        _ = await hauld.stop()

        results.benchSeconds = began.duration(to: .now).seconds
        results.targets = Targets.check(results)
        try write(results)
        print(ReportTable.render(results))
        print("Figures written to \(output).")
    }

    private func startServer(_ workspace: Workspace) async throws -> any FileServer {
        switch server ?? (NginxServer.isInstalled ? .nginx : .python) {
        case .nginx:
            return try await NginxServer(
                root: workspace.served, workDirectory: workspace.root.appendingPathComponent("nginx"))
        case .python:
            return try await PythonFileServer(root: workspace.served)
        }
    }

    private func write(_ results: BenchResults) throws {
        let url = URL(fileURLWithPath: output)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: url)
    }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("haul-bench: \(message)\n".utf8))
    }

    private static func today() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date())
    }
}
