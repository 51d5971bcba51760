import FoundationEssentials

/// A task record's file, `<id>.json` (``TaskStore``): one JSON object with the keys below; enums by their record names
/// (`TaskRecordNames.swift`), never by their bus strings; `createdAt` in seconds since 2001-01-01 00:00 UTC.
///
/// Decoding validates what a restored task relies on — the path as ``LocalPath`` would take it, the options as
/// ``DownloadOptions`` would, an outcome exactly when the state is completed, a validator for a request header without
/// line breaks — so a tampered or damaged file is reported as corrupt instead of failing later. Fields missing from
/// the file take their defaults, so records written by older versions still load.
extension TaskRecord: Codable {
    /// The keys of a record file, spelled out: a renamed property must not rename a key.
    enum CodingKeys: String, CodingKey {
        case id = "id"
        case kind = "kind"
        case url = "url"
        case path = "path"
        case state = "state"
        case outcome = "outcome"
        case validator = "validator"
        case expectedTotal = "expectedTotal"
        case httpStatus = "httpStatus"
        case resumable = "resumable"
        case headers = "headers"
        case sha256 = "sha256"
        case overwrite = "overwrite"
        case maxRetries = "maxRetries"
        case method = "method"
        case createdAt = "createdAt"
        case interruptedRuns = "interruptedRuns"
        case notice = "notice"
        case connections = "connections"
        case segments = "segments"
        case singleConnection = "singleConnection"
        case rateLimit = "rateLimit"
        case priority = "priority"
        case allowMetered = "allowMetered"
        case queuePosition = "queuePosition"
        case awaitsName = "awaitsName"
        case filenameHint = "filenameHint"
        case application = "application"
    }

    /// Decodes and validates a record, as described on the extension.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func corrupt(_ key: CodingKeys, _ reason: String) -> DecodingError {
            .dataCorruptedError(forKey: key, in: container, debugDescription: reason)
        }

        let id = try container.decode(UInt32.self, forKey: .id)
        let kind = try container.decodeRecordName(TransferKind.self, forKey: .kind)
        // Not checked as a TransferURL: every attempt does that, so a task whose URL is no longer accepted (a
        // port out of range, saved by an older hauld) ends with InvalidArgument instead of disappearing.
        let url = try container.decode(String.self, forKey: .url)
        let path = try container.decode(String.self, forKey: .path)
        let awaitsName = try container.decodeIfPresent(Bool.self, forKey: .awaitsName) ?? false
        do {
            if awaitsName { try LocalPath.check(folder: path) } else { try LocalPath.check(path) }
        } catch {
            throw corrupt(.path, error.description)
        }
        let createdAt = try container.decode(Double.self, forKey: .createdAt)
        self.init(id: id, kind: kind, url: url, path: path, createdAt: Date(timeIntervalSinceReferenceDate: createdAt))

        state = try container.decodeRecordName(TransferTaskState.self, forKey: .state)
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
        method = try container.decodeRecordNameIfPresent(UploadOptions.Method.self, forKey: .method) ?? .put
        interruptedRuns = try container.decodeIfPresent(UInt32.self, forKey: .interruptedRuns) ?? 0
        notice = try container.decodeIfPresent(String.self, forKey: .notice)
        connections = try container.decodeIfPresent(UInt32.self, forKey: .connections) ?? 1
        guard DownloadOptions.connectionRange.contains(connections) else {
            throw corrupt(.connections, "connections must be between 1 and 16")
        }
        // Checked against the file's size when used (`SegmentPlan.restored`): a plan that does not fit is dropped.
        segments = try container.decodeIfPresent(SegmentPlan.self, forKey: .segments)
        singleConnection = try container.decodeIfPresent(Bool.self, forKey: .singleConnection) ?? false
        rateLimit = try container.decodeIfPresent(UInt64.self, forKey: .rateLimit) ?? 0
        guard RateLimitRule.isValid(rateLimit) else { throw corrupt(.rateLimit, "rateLimit must be \(RateLimitRule.requirement)") }
        priority = try container.decodeRecordNameIfPresent(TransferPriority.self, forKey: .priority) ?? .foreground
        allowMetered = try container.decodeIfPresent(Bool.self, forKey: .allowMetered) ?? priority.allowsMeteredByDefault
        queuePosition = try container.decodeIfPresent(UInt64.self, forKey: .queuePosition) ?? 0
        self.awaitsName = awaitsName
        guard !awaitsName || kind == .download else { throw corrupt(.awaitsName, "only a download awaits a name") }
        filenameHint = try container.decodeIfPresent(String.self, forKey: .filenameHint)
        application = try container.decodeIfPresent(String.self, forKey: .application) ?? ""
    }

    /// Encodes the record; optional fields only when set.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeRecordName(kind, forKey: .kind)
        try container.encode(url, forKey: .url)
        try container.encode(path, forKey: .path)
        try container.encodeRecordName(state, forKey: .state)
        try container.encodeIfPresent(outcome, forKey: .outcome)
        try container.encodeIfPresent(validator, forKey: .validator)
        try container.encode(expectedTotal, forKey: .expectedTotal)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(resumable, forKey: .resumable)
        try container.encode(headers, forKey: .headers)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encode(overwrite, forKey: .overwrite)
        try container.encode(maxRetries, forKey: .maxRetries)
        try container.encodeRecordName(method, forKey: .method)
        try container.encode(createdAt.timeIntervalSinceReferenceDate, forKey: .createdAt)
        try container.encode(interruptedRuns, forKey: .interruptedRuns)
        try container.encodeIfPresent(notice, forKey: .notice)
        try container.encode(connections, forKey: .connections)
        try container.encodeIfPresent(segments, forKey: .segments)
        try container.encode(singleConnection, forKey: .singleConnection)
        // Only when set: records without a limit keep the bytes they had before limits existed.
        if rateLimit != 0 { try container.encode(rateLimit, forKey: .rateLimit) }
        if priority != .foreground { try container.encodeRecordName(priority, forKey: .priority) }
        if allowMetered != priority.allowsMeteredByDefault { try container.encode(allowMetered, forKey: .allowMetered) }
        if queuePosition != 0 { try container.encode(queuePosition, forKey: .queuePosition) }
        if awaitsName { try container.encode(awaitsName, forKey: .awaitsName) }
        try container.encodeIfPresent(filenameHint, forKey: .filenameHint)
        if !application.isEmpty { try container.encode(application, forKey: .application) }
    }
}
