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
    var busLoad: [BusLoadFigures] = []
    var control: ControlFigures?
    var indicator: IndicatorFigures?
    var idle: IdleFigures?
    var targets: [TargetCheck] = []
}

struct SingleDownloadFigures: Codable, Sendable {
    var bytes: Int
    var hauldSeconds: [Double]
    var curlSeconds: [Double]
    var curlSyncedSeconds: [Double]
    var hauldCPUSeconds: [Double]
    var curlCPUSeconds: [Double]
    var curlSyncedCPUSeconds: [Double]

    var hauldMedianSeconds: Double
    var curlSyncedMedianSeconds: Double
    var curlMedianSeconds: Double
    /// hauld's wall time over curl's (with its fsync): below 1 means hauld was faster.
    var wallRatio: Double
    /// The same against curl without fsync.
    var wallRatioUnsynced: Double
    var hauldCPUSecondsPerGiB: Double
    var curlSyncedCPUSecondsPerGiB: Double
    var curlCPUSecondsPerGiB: Double
    /// hauld's CPU over curl's with its fsync.
    var cpuRatio: Double
    var cpuRatioUnsynced: Double
}

struct ConcurrentFigures: Codable, Sendable {
    var transfers: Int
    var bytesEach: Int
    var hauldSeconds: [Double]
    var curlSeconds: [Double]
    var curlSyncedSeconds: [Double]
    var hauldCPUSeconds: [Double]
    var curlCPUSeconds: [Double]
    var curlSyncedCPUSeconds: [Double]

    var hauldMedianSeconds: Double
    var curlSyncedMedianSeconds: Double
    var curlMedianSeconds: Double
    var wallRatio: Double
    var wallRatioUnsynced: Double
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

struct ControlFigures: Codable, Sendable {
    var tasksInFlight: Int
    var samples: Int
    var suspendMilliseconds: [Double]
    var resumeMilliseconds: [Double]
    var suspendP50Milliseconds: Double
    var suspendP99Milliseconds: Double
    var resumeP50Milliseconds: Double
    var resumeP99Milliseconds: Double
}

struct IndicatorFigures: Codable, Sendable {
    var activationDelaySeconds: Double
    var completionDelaySeconds: Double
    var repetitions: Int
    /// Measured delay minus configured delay, per repetition.
    var activationErrorMilliseconds: [Double]
    var completionErrorMilliseconds: [Double]
    var activationErrorP50Milliseconds: Double
    var activationErrorP99Milliseconds: Double
    var completionErrorP50Milliseconds: Double
    var completionErrorP99Milliseconds: Double
}

struct IdleFigures: Codable, Sendable {
    var seconds: Double
    /// From the threads' `schedstat`, to the nanosecond.
    var cpuSeconds: Double
    /// Context switches of hauld's threads: each one a wake-up.
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
