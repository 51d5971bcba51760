/// Where the next attempt of a download starts, decided from its record and the size of its partial file: from an
/// offset on one connection, or from a segment plan on several. Pure: the transfer engine measures the file and
/// carries the decision out.
package enum DownloadStart: Equatable, Sendable {
    /// One connection, from `offset` (0: from the start), sending `validator` back in `If-Range` when resuming.
    case single(offset: Int64, validator: ResumeValidator?)
    /// Up to `connections` connections, continuing `plan` made under `validator`, or from zero when `plan` is nil.
    case segmented(connections: Int, plan: SegmentPlan?, validator: ResumeValidator?)

    /// The start of `record`'s next attempt when its partial file holds `partialSize` bytes (for a segmented
    /// download, the file's allocated size, which says nothing of what is in it: its plan says that).
    package init(_ record: TaskRecord, partialSize: UInt64) {
        let onDisk = Int64(clamping: partialSize)
        // Without a validator usable in If-Range, a 206 could splice two versions of the resource: start from zero.
        let canResume = record.validator?.ifRangeValue != nil
        // A file not named yet has nothing on disk, and its one connection's first answer names it.
        guard !record.awaitsName else {
            self = .single(offset: 0, validator: nil)
            return
        }
        guard Self.usesSegments(record) else {
            self = .single(offset: canResume ? onDisk : 0, validator: record.validator)
            return
        }
        // Without a plan, what one connection appended so far is the first segment's start (Connections raised
        // mid-way). A plan that does not fit the file as the server last described it starts from zero.
        let appended = canResume && record.expectedTotal > 0
            ? SegmentPlan(total: record.expectedTotal, done: onDisk) : nil
        let plan = record.segments.map { SegmentPlan.restored($0, total: record.expectedTotal) } ?? appended
        self = .segmented(
            connections: Int(record.connections), plan: plan, validator: plan == nil ? nil : record.validator
        )
    }

    /// Whether a download goes through the segmented engine: it may use several connections, or it has a plan on
    /// disk (its partial file has holes that only the plan knows). Not after the file changed under it.
    private static func usesSegments(_ record: TaskRecord) -> Bool {
        record.kind == .download && !record.singleConnection && (record.connections > 1 || record.segments != nil)
    }

    /// The bytes already on disk that the attempt continues from: its progress before the server answers.
    package var bytesDone: UInt64 {
        switch self {
        case .single(let offset, _): UInt64(max(offset, 0))
        case .segmented(_, let plan, _): UInt64(max(plan?.bytesDone ?? 0, 0))
        }
    }
}
