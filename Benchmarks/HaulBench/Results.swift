import HaulTestSupport

/// Every figure of a run, as written to the JSON file. Times in seconds, or milliseconds where the name says so;
/// memory in bytes. `curl…` figures are `curl` alone; `curlSynced…` add the `fsync` of what it wrote (its time, and
/// the CPU time of the call, where the kernel writes the pages out): the durable result hauld's completion stands for
/// (hauld syncs a download before renaming it into place, and is charged that CPU time itself).
struct BenchResults: Codable, Sendable {
    var date: String
    var machine: MachineFacts
    var server: String
    var benchSeconds: Double = 0
    var hauldFresh: MemoryFigures?
    var singleDownload: SingleDownloadFigures?
    var concurrent: ConcurrentFigures?
    var segmented: SegmentedFigures?
    var rateLimits: RateLimitFigures?
    var busLoad: [BusLoadFigures] = []
    var control: ControlFigures?
    var indicator: IndicatorFigures?
    var idle: IdleFigures?
    var scale: ScaleFigures?
    var abuse: AbuseFigures?
    var targets: [TargetCheck] = []
}

/// One workload done round after round by hauld and by curl: every round's figures, and their medians and ratios
/// (hauld over curl: below 1 means hauld took less).
struct RoundFigures: Codable, Sendable {
    var hauldSeconds: [Double]
    var curlSeconds: [Double]
    var curlSyncedSeconds: [Double]
    var hauldCPUSeconds: [Double]
    var curlCPUSeconds: [Double]
    var curlSyncedCPUSeconds: [Double]

    var hauldMedianSeconds: Double
    var curlMedianSeconds: Double
    var curlSyncedMedianSeconds: Double
    var hauldMedianCPUSeconds: Double
    var curlMedianCPUSeconds: Double
    var curlSyncedMedianCPUSeconds: Double
    /// hauld's wall time over curl's with its fsync.
    var wallRatio: Double
    /// The same against curl without fsync.
    var wallRatioUnsynced: Double
    /// hauld's CPU over curl's with its fsync.
    var cpuRatio: Double
    var cpuRatioUnsynced: Double

    init(hauld: [Bench.HauldRun], curl: [Bench.CurlRun]) {
        hauldSeconds = hauld.map(\.wall.seconds)
        curlSeconds = curl.map(\.wall.seconds)
        curlSyncedSeconds = curl.map(\.synced.seconds)
        hauldCPUSeconds = hauld.map(\.cpu.seconds)
        curlCPUSeconds = curl.map(\.cpu.seconds)
        curlSyncedCPUSeconds = curl.map(\.syncedCPU.seconds)
        hauldMedianSeconds = Statistics.median(hauldSeconds)
        curlMedianSeconds = Statistics.median(curlSeconds)
        curlSyncedMedianSeconds = Statistics.median(curlSyncedSeconds)
        hauldMedianCPUSeconds = Statistics.median(hauldCPUSeconds)
        curlMedianCPUSeconds = Statistics.median(curlCPUSeconds)
        curlSyncedMedianCPUSeconds = Statistics.median(curlSyncedCPUSeconds)
        wallRatio = hauldMedianSeconds / curlSyncedMedianSeconds
        wallRatioUnsynced = hauldMedianSeconds / curlMedianSeconds
        cpuRatio = hauldMedianCPUSeconds / curlSyncedMedianCPUSeconds
        cpuRatioUnsynced = hauldMedianCPUSeconds / curlMedianCPUSeconds
    }
}

struct SingleDownloadFigures: Codable, Sendable {
    var bytes: Int
    var rounds: RoundFigures
}

struct ConcurrentFigures: Codable, Sendable {
    var transfers: Int
    var bytesEach: Int
    var rounds: RoundFigures
    var hauldPeakResidentBytes: Int
    var curlPeakResidentBytes: Int
    /// (peak − resident before the phase) / transfers.
    var hauldResidentBytesPerTask: Int
}

struct BusLoadFigures: Codable, Sendable {
    var scenario: String
    var tasks: Int
    var seconds: Double
    /// Every signal hauld emitted in the window.
    var signals: Int
    var signalsPerSecond: Double
    /// `PropertiesChanged` of task objects.
    var taskPropertySignals: Int
    var taskPropertySignalsPerTaskPerSecond: Double
    /// The most `PropertiesChanged` one task emitted within any one second (a sliding window).
    var maxTaskPropertySignalsInOneSecond: Int
}

/// Repeated timings in milliseconds, with their median and 99th percentile.
struct Latencies: Codable, Sendable {
    var milliseconds: [Double]
    var p50: Double
    /// Of the absolute values: an error is as bad early as late.
    var p99: Double

    init(_ milliseconds: [Double]) {
        self.milliseconds = milliseconds
        p50 = Statistics.percentile(milliseconds, 0.5)
        p99 = Statistics.percentile(milliseconds.map(abs), 0.99)
    }
}

struct ControlFigures: Codable, Sendable {
    var tasksInFlight: Int
    var suspend: Latencies
    var resume: Latencies
}

struct IndicatorFigures: Codable, Sendable {
    var activationDelaySeconds: Double
    var completionDelaySeconds: Double
    /// Measured delay minus configured delay, per repetition.
    var activationError: Latencies
    var completionError: Latencies
}

struct IdleFigures: Codable, Sendable {
    /// How long after the load hauld closed its last pooled connection.
    var connectionsClosedSeconds: Double
    /// How long after the load the idle time began: once those connections were closed and hauld's last heap trim,
    /// a minute after the load, was done.
    var startSeconds: Double
    var seconds: Double
    /// From the threads' `schedstat`, to the nanosecond.
    var cpuSeconds: Double
    /// Voluntary context switches of hauld's threads: each one a wake-up.
    var wakeups: Int
    var signals: Int
    var memory: MemoryFigures
}

/// hauld's memory at one moment.
struct MemoryFigures: Codable, Sendable {
    /// `VmRSS`.
    var residentBytes: Int
    /// `RssAnon`: heap and stacks; the rest of the resident set is pages of the executable and shared libraries.
    var anonymousBytes: Int
    /// `Pss`: shared library pages divided among the processes that map them.
    var proportionalBytes: Int

    init(_ sample: ProcessSample) {
        residentBytes = sample.residentBytes
        anonymousBytes = sample.anonymousBytes
        proportionalBytes = sample.proportionalBytes
    }
}

struct TargetCheck: Codable, Sendable {
    var target: String
    var measured: String
    var met: Bool
}

/// Ten thousand tasks on a hauld of their own (issue #21). Times in milliseconds.
struct ScaleFigures: Codable, Sendable {
    var tasks: Int
    var clients: Int
    /// `DownloadWithOptions` with `start-suspended`, from every client at once, each task durable when answered.
    var creationPerSecond: Double = 0
    /// Once they are created.
    var residentBytes = 0
    /// Median of 5, the reply decoded.
    var managedObjectsMilliseconds: Double = 0
    /// The same from a client that decodes nothing, and from a replayer of hauld's reply to that client: what the bus
    /// costs alone (`ManagedObjectsFloor`). Median of 5 each.
    var managedObjectsUndecodedMilliseconds: Double = 0
    var managedObjectsReplayedMilliseconds: Double = 0
    var managedObjectsBytes = 0
    /// `haul ls`, the process from start to exit, median of 3.
    var listMilliseconds: Double = 0
    var maxRunningTasks = 0
    var resumeAllMilliseconds: Double = 0
    var suspendAllMilliseconds: Double = 0
    var resumeAgainMilliseconds: Double = 0
    var suspendAgainMilliseconds: Double = 0
    /// The most connections to the server at once from the first `ResumeAll` to the last `SuspendAll`.
    var mostConnectionsAtOnce = 0
    /// The longest another client waited for an answer (`AnswerWatch`) over the same time, and over the 3 s after the
    /// restarted hauld's first answer, while its restored tasks rejoin the queue.
    var slowestAnswerDuringAllMilliseconds: Double = 0
    var slowestAnswerAfterRestartMilliseconds: Double = 0
    /// From SIGTERM to its exit.
    var sigtermExitMilliseconds: Double = 0
    /// From starting hauld again to its owning the bus name, and to its first answer (a `Properties.Get`).
    var restartToNameMilliseconds: Double = 0
    var restartToAnswerMilliseconds: Double = 0
    var restartedResidentBytes = 0
    var cancelAllMilliseconds: Double = 0
}
