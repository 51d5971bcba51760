package import FoundationEssentials

/// Everything needed to restore a task after the daemon stops, crashes or the machine reboots (docs/behaviour.md).
///
/// Byte counts are not kept: they are recovered from the partial file, which is the truth (a count saved a moment
/// before a crash would be behind it). The URL is kept whole, password included, because resuming needs it; the
/// store's files are private to the user (mode 0600).
///
/// Decoding validates what a restored task relies on — the path as ``LocalPath`` would take it, the options as
/// ``DownloadOptions`` would, an outcome exactly when the state is completed, a validator for a request header without
/// line breaks — so a tampered or damaged file is reported as corrupt instead of failing later. Fields missing from
/// the file take their defaults, so records written by older versions still load.
package struct TaskRecord: Codable, Sendable, Equatable {
    /// The task's id (its object path is `/org/haul/Haul1/Tasks/<id>`).
    package var id: UInt32
    package var kind: TransferKind
    /// The URL as the client gave it, password included.
    package var url: String
    /// A download's destination or an upload's source.
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
    /// ``TransferTaskStateMachine/interruptedRuns``).
    package var interruptedRuns: UInt32
    /// Why hauld itself suspended the task (``TransferTaskStateMachine/notice``), shown while it stays suspended.
    package var notice: String?
    /// How many connections a download may use (1–16).
    package var connections: UInt32
    /// What each segment of a download over several connections has on disk; nil for one connection.
    package var segments: SegmentPlan?
    /// The file changed under a segmented download, or its server gave no size with its ranges: one connection
    /// from then on, whatever ``connections`` says.
    package var singleConnection: Bool

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
        singleConnection: Bool = false
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
    }

    /// The record of a new download of `url` to `path`.
    package init(id: UInt32, download url: TransferURL, to path: LocalPath, options: DownloadOptions, createdAt: Date) {
        self.init(
            id: id,
            kind: .download,
            url: url.url.absoluteString,
            path: path.path,
            createdAt: createdAt,
            headers: options.headers,
            sha256: options.sha256,
            overwrite: options.overwrite,
            maxRetries: options.maxRetries,
            connections: options.connections ?? 1
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
            method: options.method
        )
    }

    /// The download options kept (`start-suspended` is not: the state says it).
    package var downloadOptions: DownloadOptions {
        var options = DownloadOptions()
        options.headers = headers
        options.sha256 = sha256
        options.overwrite = overwrite
        options.maxRetries = maxRetries
        options.connections = connections
        return options
    }

    /// The upload options kept.
    package var uploadOptions: UploadOptions {
        var options = UploadOptions()
        options.method = method
        options.headers = headers
        return options
    }

    // MARK: - Codable

    private enum CodingKeys: String, CodingKey {
        case id, kind, url, path, state, outcome, validator, expectedTotal, httpStatus, resumable, headers, sha256,
            overwrite, maxRetries, method, createdAt, interruptedRuns, notice, connections, segments, singleConnection
    }

    /// Decodes and validates a record, as described on the type.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func corrupt(_ key: CodingKeys, _ reason: String) -> DecodingError {
            .dataCorruptedError(forKey: key, in: container, debugDescription: reason)
        }

        id = try container.decode(UInt32.self, forKey: .id)
        kind = try container.decode(TransferKind.self, forKey: .kind)
        // Not checked as a TransferURL: every attempt does that, so a task whose URL is no longer accepted (a
        // port out of range, saved by an older hauld) ends with InvalidArgument instead of disappearing.
        url = try container.decode(String.self, forKey: .url)
        path = try container.decode(String.self, forKey: .path)
        do {
            _ = try LocalPath(path)
        } catch {
            throw corrupt(.path, error.description)
        }
        state = try container.decode(TransferTaskState.self, forKey: .state)
        outcome = try container.decodeIfPresent(TransferOutcome.self, forKey: .outcome)
        guard (state == .completed) == (outcome != nil) else {
            throw corrupt(.outcome, "a task has an outcome exactly when it is completed")
        }
        validator = try container.decodeIfPresent(ResumeValidator.self, forKey: .validator)
        // Sent back in If-Range: a line break would inject a header.
        let breaksLine = { (value: String?) in value?.utf8.contains { $0 == 0 || $0 == 10 || $0 == 13 } == true }
        guard !breaksLine(validator?.etag), !breaksLine(validator?.lastModified) else {
            throw corrupt(.validator, "the validator contains a line break or a NUL byte")
        }
        expectedTotal = try container.decodeIfPresent(Int64.self, forKey: .expectedTotal) ?? -1
        guard expectedTotal >= -1 else {
            throw corrupt(.expectedTotal, "expectedTotal must be -1 (unknown) or a size")
        }
        httpStatus = try container.decodeIfPresent(UInt32.self, forKey: .httpStatus) ?? 0
        resumable = try container.decodeIfPresent(Bool.self, forKey: .resumable) ?? false
        do {
            headers = try DownloadOptions.validatedHeaders(
                container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
            )
        } catch let error as TransferRequestError {
            throw corrupt(.headers, error.description)
        }
        do {
            sha256 = try container.decodeIfPresent(String.self, forKey: .sha256).map(DownloadOptions.validatedSHA256)
        } catch let error as TransferRequestError {
            throw corrupt(.sha256, error.description)
        }
        overwrite = try container.decodeIfPresent(Bool.self, forKey: .overwrite) ?? false
        maxRetries = try container.decodeIfPresent(UInt32.self, forKey: .maxRetries) ?? 5
        let methodName =
            try container.decodeIfPresent(String.self, forKey: .method) ?? UploadOptions.Method.put.rawValue
        guard let method = UploadOptions.Method(rawValue: methodName) else {
            throw corrupt(.method, "'\(methodName)' is not an upload method")
        }
        self.method = method
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        interruptedRuns = try container.decodeIfPresent(UInt32.self, forKey: .interruptedRuns) ?? 0
        notice = try container.decodeIfPresent(String.self, forKey: .notice)
        connections = try container.decodeIfPresent(UInt32.self, forKey: .connections) ?? 1
        guard DownloadOptions.connectionRange.contains(connections) else {
            throw corrupt(.connections, "connections must be between 1 and 16")
        }
        // Checked against the file's size when used (`SegmentPlan.restored`): a plan that does not fit is dropped.
        segments = try container.decodeIfPresent(SegmentPlan.self, forKey: .segments)
        singleConnection = try container.decodeIfPresent(Bool.self, forKey: .singleConnection) ?? false
    }

    /// Encodes the record; the method as its name (`PUT`, `POST`).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(url, forKey: .url)
        try container.encode(path, forKey: .path)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(outcome, forKey: .outcome)
        try container.encodeIfPresent(validator, forKey: .validator)
        try container.encode(expectedTotal, forKey: .expectedTotal)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(resumable, forKey: .resumable)
        try container.encode(headers, forKey: .headers)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encode(overwrite, forKey: .overwrite)
        try container.encode(maxRetries, forKey: .maxRetries)
        try container.encode(method.rawValue, forKey: .method)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(interruptedRuns, forKey: .interruptedRuns)
        try container.encodeIfPresent(notice, forKey: .notice)
        try container.encode(connections, forKey: .connections)
        try container.encodeIfPresent(segments, forKey: .segments)
        try container.encode(singleConnection, forKey: .singleConnection)
    }
}
