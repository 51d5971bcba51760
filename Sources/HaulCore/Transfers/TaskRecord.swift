package import FoundationEssentials

/// Everything needed to restore a task after the daemon stops, crashes or the machine reboots (docs/behaviour.md).
///
/// Byte counts are not kept: they are recovered from the partial file, which is the truth (a count saved a moment
/// before a crash would be behind it). The URL is kept whole, password included, because resuming needs it; the
/// store's files are private to the user (mode 0600).
///
/// The file format, keys and names included, is written down apart from the type (`TaskRecord+Coding.swift`), so that
/// renaming a property or a bus string never changes a saved file.
package struct TaskRecord: Sendable, Equatable {
    /// The task's id (its object path is `/org/haul/Haul1/Tasks/<id>`).
    package var id: UInt32
    package var kind: TransferKind
    /// The URL as the client gave it, password included.
    package var url: String
    /// A download's destination or an upload's source; the folder of a download into a folder until its name is chosen
    /// (``awaitsName``).
    package var path: String
    package var state: TransferTaskState
    /// Set exactly when ``state`` is ``TransferTaskState/completed``.
    package var outcome: TransferOutcome?
    /// The validator of the first response, sent back in `If-Range` when resuming.
    package var validator: ResumeValidator?
    /// The size of the whole resource (download) or body (upload), or -1 when unknown.
    package var expectedTotal: Int64
    /// The status of the last response, or 0 before any.
    package var httpStatus: UInt32
    /// Whether the server allows resuming from the bytes on disk (D-Bus `Resumable`).
    package var resumable: Bool
    /// Extra request headers (download or upload).
    package var headers: [String: String]
    /// The lower-case hex SHA-256 the downloaded file must have.
    package var sha256: String?
    /// Whether a download may replace an existing destination.
    package var overwrite: Bool
    /// How many times a transient failure is retried.
    package var maxRetries: UInt32
    /// An upload's method.
    package var method: UploadOptions.Method
    /// When the client asked for the task.
    package var createdAt: Date
    /// Unclean exits of hauld in a row that cut an attempt of this task short (the crash-loop guard, see
    /// ``CrashLoopGuard/interruptedRuns``).
    package var interruptedRuns: UInt32
    /// Why hauld itself suspended the task (``CrashLoopGuard/notice``), shown while it stays suspended.
    package var notice: String?
    /// How many connections a download may use (1–16).
    package var connections: UInt32
    /// What each segment of a download over several connections has on disk; nil for one connection.
    package var segments: SegmentPlan?
    /// The file changed under a segmented download, or its server gave no size with its ranges: one connection
    /// from then on, whatever ``connections`` says.
    package var singleConnection: Bool
    /// The task's own rate limit in bytes per second (D-Bus `RateLimit`; 0: none), within ``RateLimitRule``.
    package var rateLimit: UInt64
    /// Foreground or background (D-Bus `Priority`).
    package var priority: TransferPriority
    /// May transfer on a metered network (D-Bus `AllowMetered`): at creation the option or else the priority's
    /// default; then only what a client writes.
    package var allowMetered: Bool
    /// The task's place in the queue: tasks join it in the order of these numbers (0: before any numbered one, as
    /// records written before the queue existed), so that a restart keeps the order.
    package var queuePosition: UInt64
    /// A download into a folder whose file is not named yet: ``path`` is the folder, and the first response names the
    /// file (``FileNameChoice``).
    package var awaitsName: Bool
    /// The name the client suggested for a download into a folder (`filename-hint`).
    package var filenameHint: String?
    /// Who created the task (D-Bus `Application`): a desktop-file id, an executable's name, or empty.
    package var application: String

    /// Creates a record; the defaults are those of a task that has not received a response yet.
    package init(
        id: UInt32,
        kind: TransferKind,
        url: String,
        path: String,
        createdAt: Date,
        state: TransferTaskState = .suspended,
        outcome: TransferOutcome? = nil,
        validator: ResumeValidator? = nil,
        expectedTotal: Int64 = -1,
        httpStatus: UInt32 = 0,
        resumable: Bool = false,
        headers: [String: String] = [:],
        sha256: String? = nil,
        overwrite: Bool = false,
        maxRetries: UInt32 = 5,
        method: UploadOptions.Method = .put,
        interruptedRuns: UInt32 = 0,
        notice: String? = nil,
        connections: UInt32 = 1,
        segments: SegmentPlan? = nil,
        singleConnection: Bool = false,
        rateLimit: UInt64 = 0,
        priority: TransferPriority = .foreground,
        allowMetered: Bool? = nil,
        queuePosition: UInt64 = 0,
        awaitsName: Bool = false,
        filenameHint: String? = nil,
        application: String = ""
    ) {
        self.id = id
        self.kind = kind
        self.url = url
        self.path = path
        self.createdAt = createdAt
        self.state = state
        self.outcome = outcome
        self.validator = validator
        self.expectedTotal = expectedTotal
        self.httpStatus = httpStatus
        self.resumable = resumable
        self.headers = headers
        self.sha256 = sha256
        self.overwrite = overwrite
        self.maxRetries = maxRetries
        self.method = method
        self.interruptedRuns = interruptedRuns
        self.notice = notice
        self.connections = connections
        self.segments = segments
        self.singleConnection = singleConnection
        self.rateLimit = rateLimit
        self.priority = priority
        self.allowMetered = allowMetered ?? priority.allowsMeteredByDefault
        self.queuePosition = queuePosition
        self.awaitsName = awaitsName
        self.filenameHint = filenameHint
        self.application = application
    }

    /// The record of a new download of `url` to `destination`. One into a folder never replaces a file.
    package init(
        id: UInt32, download url: TransferURL, to destination: DownloadDestination, options: DownloadOptions,
        createdAt: Date
    ) {
        let intoFolder = destination.isFolder
        self.init(
            id: id,
            kind: .download,
            url: url.url.absoluteString,
            path: destination.path.path,
            createdAt: createdAt,
            headers: options.headers,
            sha256: options.sha256,
            overwrite: options.overwrite && !intoFolder,
            maxRetries: options.maxRetries,
            connections: options.connections ?? 1,
            rateLimit: options.rateLimit,
            priority: options.priority,
            allowMetered: options.allowMetered,
            awaitsName: intoFolder,
            filenameHint: intoFolder ? options.filenameHint : nil,
            application: options.application
        )
    }

    /// The record of a new upload of the file at `path` to `url`.
    package init(id: UInt32, upload path: LocalPath, to url: TransferURL, options: UploadOptions, createdAt: Date) {
        self.init(
            id: id,
            kind: .upload,
            url: url.url.absoluteString,
            path: path.path,
            createdAt: createdAt,
            headers: options.headers,
            method: options.method,
            rateLimit: options.rateLimit,
            priority: options.priority,
            allowMetered: options.allowMetered,
            application: options.application
        )
    }

    /// Whether the record may hold a secret: a userinfo in its URL (a password, perhaps) or request headers (an
    /// `Authorization` or a `Cookie`, perhaps). Its file's replaced versions are then overwritten with zeros
    /// (``AtomicFile/Spare/erased``); a change that removes a secret says so when it saves the record
    /// (``TaskRecordWriter/save(_:syncing:erasingPrevious:onFailure:)``).
    package var mayHoldSecrets: Bool {
        !headers.isEmpty || url.utf8.contains(UInt8(ascii: "@"))
    }

    /// The download options kept (`start-suspended` is not: the state says it).
    package var downloadOptions: DownloadOptions {
        var options = DownloadOptions()
        options.headers = headers
        options.sha256 = sha256
        options.overwrite = overwrite
        options.maxRetries = maxRetries
        options.connections = connections
        options.rateLimit = rateLimit
        return options
    }

    /// The upload options kept.
    package var uploadOptions: UploadOptions {
        var options = UploadOptions()
        options.method = method
        options.headers = headers
        options.rateLimit = rateLimit
        return options
    }
}
