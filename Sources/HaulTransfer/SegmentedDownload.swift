import FoundationEssentials
import HaulCore
import NIOCore
import Synchronization

/// One attempt of a download over several connections: the file is split into segments (`SegmentPlan`) fetched in
/// parallel into one partial file, each with `Range` and `If-Range`; a connection that finishes takes over half of
/// the largest remaining segment.
///
/// A fresh download asks for `bytes=0-` first: once that answer tells the size and a validator, the rest is split
/// among the other connections. A server that ignores ranges, or gives no validator, keeps that one connection. Any
/// sign that the file changed (a 200 or a 416 to a ranged request, another validator) ends the attempt with
/// ``changed``: the caller then starts again from zero with one connection.
struct SegmentedDownload {
    /// What the caller hears while the attempt runs.
    struct Observer: Sendable {
        /// The first answer of a fresh download: status, headers, the total size (if known).
        var head: @Sendable (DownloadHead) -> Void
        /// Bytes on disk in the whole file.
        var progress: @Sendable (UInt64) -> Void
        /// The plan to save with the task: when it is made or split, on every MiB of a segment, and when the
        /// attempt ends.
        var plan: @Sendable (SegmentPlan) -> Void
    }

    let url: URL
    let partialPath: String
    let connections: Int
    /// Bytes each connection writes between two write-outs (``Writeback/segmentChunk(underLimit:)``).
    let writebackChunk: UInt64
    let observer: Observer
    /// One request of a segment, redirects followed (``TransferClient``'s).
    let exchange: @Sendable (URL, [(String, String)], SegmentWriter) async throws(TransferFailure) -> DownloadResponse

    static let changed = TransferFailure(
        kind: .network,
        message: "the file changed on the server (or it stopped honouring ranges): starting again from zero",
        isTransient: true
    )
    static let unsized = TransferFailure(
        kind: .network, message: "the server gave no size with its ranges: starting again with one connection",
        isTransient: true
    )
    static let unusableRange = TransferFailure(
        kind: .network, message: "the server answered a segment with another range than asked", isTransient: true
    )
    /// A segment's writer reached its end before its response did (its end moved): not an error.
    static let segmentEnded = TransferFailure(kind: .network, message: "segment complete", isTransient: true)

    private enum Event: Sendable {
        case sized
        /// A segment's connection is done: its bytes are all on disk, or why not.
        case ended(TransferFailure?)
    }

    /// Runs until the file is whole (synced to disk), a segment fails, or the calling task is cancelled. `plan` is
    /// the saved plan to continue, with the `validator` it was made under; nil starts from zero.
    func run(plan saved: SegmentPlan?, validator: ResumeValidator?) async throws(TransferFailure) -> DownloadOutcome {
        let resuming = saved != nil && validator?.ifRangeValue != nil
        let file = try SegmentFile(path: partialPath, truncate: !resuming, writebackChunk: writebackChunk)
        let book = SegmentBook(
            plan: resuming ? saved : nil, validator: resuming ? validator : nil, connections: connections
        )
        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        do {
            if let total = book.total, let failure = file.preallocate(total) { throw failure }
            try await withThrowingTaskGroup(of: Void.self) { group in
                var running = 0
                func launch(_ index: Int, start: Int64, end: Int64?, fresh: Bool) {
                    running += 1
                    let writer = makeWriter(index, start: start, end: end, fresh: fresh, file: file, book: book, sink)
                    book.attach(writer)
                    group.addTask {
                        let result = await segment(writer, book: book)
                        sink.yield(.ended(result))
                    }
                }
                if resuming {
                    for (index, segment) in book.startingSegments() {
                        launch(index, start: segment.next, end: segment.end, fresh: false)
                    }
                } else {
                    // A first range small enough that stopping it short wastes nothing in flight.
                    launch(0, start: 0, end: SegmentPlan.minimumSplit, fresh: true)
                }
                for await event in events {
                    switch event {
                    case .sized:
                        if let total = book.total, let failure = file.preallocate(total) { throw failure }
                        // Saved from the start: a crash from here on resumes the segments, not the download.
                        if let plan = book.plan { observer.plan(plan) }
                        for (index, segment) in book.unstarted().prefix(connections - running) {
                            launch(index, start: segment.next, end: segment.end, fresh: false)
                        }
                    case .ended(let failure?):
                        throw failure
                    case .ended:
                        running -= 1
                        // A free connection takes a segment nobody works on, else half of the largest running one.
                        if let (index, segment) = book.unstarted().first ?? book.takeOver() {
                            launch(index, start: segment.next, end: segment.end, fresh: false)
                            if let plan = book.plan { observer.plan(plan) }
                        }
                    }
                    if running == 0 { break }
                }
            }
            // A sync cancelled before its turn on the thread pool throws: the catch still hands out the plan.
            try await file.syncAndClose()
        } catch {
            book.stopAll()
            file.close()
            if let plan = book.plan { observer.plan(plan) }
            throw Task.isCancelled ? .cancelled : (error as? TransferFailure ?? .network("\(error)"))
        }
        let plan = book.plan
        if let plan { observer.plan(plan) }
        return DownloadOutcome(bytesOnDisk: UInt64(max(plan?.total ?? book.bytesWritten, 0)))
    }

    private func makeWriter(
        _ index: Int, start: Int64, end: Int64?, fresh: Bool, file: SegmentFile, book: SegmentBook,
        _ events: AsyncStream<Event>.Continuation
    ) -> SegmentWriter {
        let observer = observer
        return SegmentWriter(
            index: index, start: start, end: end, file: file, acceptsWhole: fresh,
            onHead: { _, head in
                let result = book.learn(head)
                guard case .success(let sized) = result else { return result.map { _ in () } }
                if sized { events.yield(.sized) }
                if fresh {
                    observer.head(
                        DownloadHead(status: head.status, headers: head.headers, offset: 0, expectedTotal: head.total)
                    )
                }
                return .success(())
            },
            onWritten: { index, count in
                let (total, checkpoint) = book.record(count, in: index)
                observer.progress(UInt64(max(total, 0)))
                if let checkpoint { observer.plan(checkpoint) }
            }
        )
    }

    /// Fetches one segment, in as many requests as its end moving away takes (the first request of a fresh download
    /// asks for its first mebibyte only): nil when its bytes are all on disk, else why not.
    private func segment(_ writer: SegmentWriter, book: SegmentBook) async -> TransferFailure? {
        while true {
            let before = writer.position
            var requestHeaders = [("Range", writer.beginRequest())]
            if let value = book.validator?.ifRangeValue { requestHeaders.append(("If-Range", value)) }
            do {
                _ = try await exchange(url, requestHeaders, writer)
            } catch where error != Self.segmentEnded {
                return writer.isComplete ? nil : error
            } catch {}
            if writer.isComplete || writer.isOpenEnded { return nil }
            guard writer.position > before else {
                return .network("a segment's answer ended at byte \(before) without a byte of it")
            }
        }
    }
}

/// The plan of a running segmented download and the writers working on it, shared by their connections.
final class SegmentBook: Sendable {
    private struct State {
        var plan: SegmentPlan?
        var validator: ResumeValidator?
        var writers: [Int: SegmentWriter] = [:]
        /// Bytes written when there is no plan (one connection to a server without ranges or sizes).
        var written: Int64 = 0
        /// Per segment, the `done` last handed out as a checkpoint.
        var checkpoints: [Int: Int64] = [:]
    }

    private let state: Mutex<State>
    private let connections: Int
    /// How far a segment goes between two plans handed to the caller: what a crash may make it fetch again.
    static let checkpoint: Int64 = 1 << 20

    init(plan: SegmentPlan?, validator: ResumeValidator?, connections: Int) {
        state = Mutex(State(plan: plan, validator: validator))
        self.connections = connections
    }

    var plan: SegmentPlan? { state.withLock { $0.plan } }
    var validator: ResumeValidator? { state.withLock { $0.validator } }
    var total: Int64? { state.withLock { $0.plan?.total } }
    var bytesWritten: Int64 { state.withLock { $0.plan?.bytesDone ?? $0.written } }

    func attach(_ writer: SegmentWriter) {
        state.withLock { $0.writers[writer.index] = writer }
    }

    func stopAll() {
        for writer in state.withLock({ Array($0.writers.values) }) { writer.stop() }
    }

    /// The segments to start a resumed attempt on, largest first, split further toward `connections`.
    func startingSegments() -> [(Int, SegmentPlan.Segment)] {
        state.withLock { state in
            guard var plan = state.plan else { return [] }
            plan.spread(over: connections)
            state.plan = plan
            return plan.unfinished.prefix(connections).map { ($0, plan.segments[$0]) }
        }
    }

    /// What a segment's answer says of the file. True when this fresh download just learnt its size and can be
    /// split; a failure when the file is no longer the one the plan was made for.
    func learn(_ head: SegmentWriter.Head) -> Result<Bool, TransferFailure> {
        state.withLock { state in
            // One connection to a server that ignores ranges: no plan, the body is the file.
            guard head.isPartial else { return .success(false) }
            if let plan = state.plan {
                let known = state.validator?.etag
                let sameTag = head.validator.etag == nil || known == nil || head.validator.etag == known
                return head.total == plan.total && sameTag ? .success(false) : .failure(SegmentedDownload.changed)
            }
            guard let total = head.total else { return .failure(SegmentedDownload.unsized) }
            // Splitting is safe only with a validator every other range request can send in If-Range.
            guard head.validator.ifRangeValue != nil else {
                state.writers[0]?.extend(to: total)
                return .success(false)
            }
            // Split before the first body byte arrives: the first connection goes on to the end of its share.
            var plan = SegmentPlan(total: total)
            plan.spread(over: connections)
            state.plan = plan
            state.validator = head.validator
            state.writers[0]?.extend(to: plan.segments[0].end)
            return .success(true)
        }
    }

    /// The segments of the plan that no connection works on yet.
    func unstarted() -> [(Int, SegmentPlan.Segment)] {
        state.withLock { state in
            guard let plan = state.plan else { return [] }
            return plan.unfinished.filter { state.writers[$0] == nil }.map { ($0, plan.segments[$0]) }
        }
    }

    /// A connection is free: it takes over half of the largest segment still running, if that half is worth it.
    func takeOver() -> (Int, SegmentPlan.Segment)? {
        state.withLock { state in
            guard var plan = state.plan else { return nil }
            let running = state.writers.filter { !$0.value.isComplete }.map(\.key)
            guard let victim = plan.largest(among: running), let writer = state.writers[victim],
                let cut = writer.shorten({ plan.cut(victim, at: $0) }), let taken = plan.split(victim, at: cut)
            else { return nil }
            state.plan = plan
            return (taken, plan.segments[taken])
        }
    }

    /// Records `count` bytes written into segment `index`: the file's total on disk, and the plan when a segment
    /// crossed a checkpoint (every MiB, and its end).
    func record(_ count: Int64, in index: Int) -> (Int64, SegmentPlan?) {
        state.withLock { state in
            guard state.plan != nil else {
                state.written += count
                return (state.written, nil)
            }
            // Mutated in place: this runs for every chunk of every connection, and a copy would copy the segments.
            state.plan?.record(count, in: index)
            guard let plan = state.plan, plan.segments.indices.contains(index) else { return (0, nil) }
            let segment = plan.segments[index]
            let last = state.checkpoints[index] ?? 0
            guard segment.done - last >= SegmentBook.checkpoint || segment.isComplete else { return (plan.bytesDone, nil) }
            state.checkpoints[index] = segment.done
            return (plan.bytesDone, plan)
        }
    }
}
