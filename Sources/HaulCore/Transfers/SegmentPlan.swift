/// How a download of known size is split into byte ranges fetched over several connections into one partial file,
/// and how far each has come: what is saved with the task so that every segment resumes on its own after a
/// suspend, a crash or a reboot.
///
/// A pure value: the transfer engine asks it what to fetch next and tells it what was written.
package struct SegmentPlan: Codable, Equatable, Sendable {
    /// One byte range `[start, end)` of the file, of which the first `done` bytes are on disk.
    package struct Segment: Codable, Equatable, Sendable {
        package var start: Int64
        package var end: Int64
        package var done: Int64

        package init(start: Int64, end: Int64, done: Int64 = 0) {
            self.start = start
            self.end = end
            self.done = done
        }

        /// Where the next byte of this segment goes.
        package var next: Int64 { start + done }
        package var remaining: Int64 { end - next }
        package var isComplete: Bool { next >= end }
    }

    /// The smallest piece a split makes: a new connection is not worth less.
    package static let minimumSplit: Int64 = 1 << 20

    /// The size of the whole file.
    package let total: Int64
    /// In the order they were made (an index names one segment for good), not in file order.
    package private(set) var segments: [Segment]

    /// A plan for a file of `total` bytes whose first `done` bytes are on disk already (a single-connection partial
    /// file being continued), as one segment.
    package init(total: Int64, done: Int64 = 0) {
        self.total = max(total, 0)
        let done = min(max(done, 0), self.total)
        segments = [Segment(start: 0, end: self.total, done: done)]
    }

    /// A plan read back from disk, if it describes a file of `total` bytes: segments that cover it without gaps or
    /// overlaps, each with `0 ≤ done ≤ end − start`. Anything else is nil (the download then starts from zero).
    package static func restored(_ plan: SegmentPlan, total: Int64) -> SegmentPlan? {
        guard plan.total == total, !plan.segments.isEmpty else { return nil }
        var expectedStart: Int64 = 0
        for segment in plan.segments.sorted(by: { $0.start < $1.start }) {
            guard segment.start == expectedStart, segment.end > segment.start, segment.done >= 0,
                segment.done <= segment.end - segment.start
            else { return nil }
            expectedStart = segment.end
        }
        return expectedStart == total ? plan : nil
    }

    package var isComplete: Bool { segments.allSatisfy(\.isComplete) }

    /// Bytes on disk in every segment together.
    package var bytesDone: Int64 { segments.reduce(0) { $0 + $1.done } }

    /// The unfinished segments, largest remaining first: what connections start on.
    package var unfinished: [Int] {
        segments.indices.filter { !segments[$0].isComplete }.sorted {
            (segments[$0].remaining, segments[$1].start) > (segments[$1].remaining, segments[$0].start)
        }
    }

    /// Records that `count` more bytes of segment `index` are on disk.
    package mutating func record(_ count: Int64, in index: Int) {
        guard segments.indices.contains(index), count > 0 else { return }
        let segment = segments[index]
        segments[index].done = min(segment.done + count, segment.end - segment.start)
    }

    /// The unfinished segment with the most left among `candidates` (what a free connection takes half of).
    package func largest(among candidates: [Int]) -> Int? {
        candidates.filter { segments.indices.contains($0) && !segments[$0].isComplete }
            .max { segments[$0].remaining < segments[$1].remaining }
    }

    /// Where to cut segment `index` when its connection is at `position`: half of what is left, or nil when that
    /// half would be under ``minimumSplit``.
    package func cut(_ index: Int, at position: Int64) -> Int64? {
        guard segments.indices.contains(index) else { return nil }
        let half = (segments[index].end - max(position, segments[index].next)) / 2
        return half >= Self.minimumSplit ? segments[index].end - half : nil
    }

    /// Ends segment `index` at `cut` and makes `[cut, old end)` a new segment, whose index is returned. The cut
    /// must leave the bytes recorded as done where they are.
    package mutating func split(_ index: Int, at cut: Int64) -> Int? {
        guard segments.indices.contains(index), cut >= segments[index].next, cut < segments[index].end else {
            return nil
        }
        let newSegment = Segment(start: cut, end: segments[index].end)
        segments[index].end = cut
        // Appended, never inserted: an index names the same segment for as long as the plan lives.
        segments.append(newSegment)
        return segments.count - 1
    }

    /// Splits toward `connections` unfinished segments at the start of an attempt: the largest keeps being halved
    /// while the halves are at least ``minimumSplit``.
    package mutating func spread(over connections: Int) {
        while unfinished.count < connections, let index = largest(among: unfinished),
            let cut = cut(index, at: segments[index].next), split(index, at: cut) != nil
        {}
    }
}
