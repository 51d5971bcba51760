import CGlibcExtras
import FoundationEssentials
import Glibc
import HaulCore
import NIOCore
import Synchronization

/// Writes the response to one segment's range request at its offsets in the shared partial file.
///
/// Its end can be moved closer while it runs (a free connection takes over the second half): it never writes past
/// it, and ends its request once there. `stop()` guarantees that no byte is written once it returns.
final class SegmentWriter: ResponseSink {
    /// What the head of a segment's answer told.
    struct Head: Sendable {
        /// A 206 for the range asked, or (false) a 200: the whole file from its first byte.
        var isPartial: Bool
        /// The file's total size, when the answer gave it.
        var total: Int64?
        var validator: ResumeValidator
        var status: Int
        var headers: [(String, String)]
    }

    private struct State {
        var position: Int64
        var end: Int64?
        var stopped = false
        var failure: TransferFailure?
        var redirect: (status: Int, location: String)?
        var writebackStart: Int64
        /// Where the range asked by the current request ends (its end may move meanwhile).
        var requestedEnd: Int64?
    }

    let index: Int
    private let file: SegmentFile
    private let state: Mutex<State>
    /// Whether a 200 (the whole file) may be written: only for the first request of a fresh download.
    private let acceptsWhole: Bool
    private let onHead: @Sendable (Int, Head) -> Result<Void, TransferFailure>
    private let onWritten: @Sendable (Int, Int64) -> Void

    init(
        index: Int, start: Int64, end: Int64?, file: SegmentFile, acceptsWhole: Bool,
        onHead: @escaping @Sendable (Int, Head) -> Result<Void, TransferFailure>,
        onWritten: @escaping @Sendable (Int, Int64) -> Void
    ) {
        self.index = index
        self.file = file
        self.acceptsWhole = acceptsWhole
        self.onHead = onHead
        self.onWritten = onWritten
        state = Mutex(State(position: start, end: end, writebackStart: start))
    }

    /// The range header for this segment's next request, which asks for the rest of the segment.
    func beginRequest() -> String {
        state.withLock { state in
            state.requestedEnd = state.end
            state.failure = nil
            return "bytes=\(state.position)-" + (state.end.map { String($0 - 1) } ?? "")
        }
    }

    /// From now on nothing more is written.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Where the next byte goes.
    var position: Int64 { state.withLock { $0.position } }

    /// Whether the end is unknown (one connection to a server that gave no size): the response's end is the file's.
    var isOpenEnded: Bool { state.withLock { $0.end == nil } }

    /// Whether every byte of the segment is on disk.
    var isComplete: Bool {
        state.withLock { state in state.end.map { state.position >= $0 } ?? false }
    }

    /// Moves the end to `cut` if this connection has not passed it yet; `decide` picks the cut from the position.
    func shorten(_ decide: (_ position: Int64) -> Int64?) -> Int64? {
        state.withLock { state in
            guard !state.stopped, let cut = decide(state.position), cut >= state.position,
                cut < (state.end ?? .max)
            else { return nil }
            state.end = cut
            return cut
        }
    }

    /// Forgets a redirect, once followed: the same writer takes the answer of the next hop.
    func clearRedirect() {
        state.withLock { $0.redirect = nil }
    }

    /// Moves the end of the first segment of a fresh download once the file's size is known: its first request
    /// asked for the first mebibyte only, the next requests go on to `end`.
    func extend(to end: Int64?) {
        state.withLock { $0.end = end }
    }

    func head(status: Int, headers: [(String, String)]) -> Result<Void, TransferFailure> {
        if let location = Redirect.location(status: status, headers: headers) { return noteRedirect(status, location) }
        let validator = ResumeValidator(headers: headers)
        let start = state.withLock { $0.position }
        let head: Head
        switch status {
        case 206:
            guard let value = HTTPResume.headerValue("Content-Range", in: headers),
                let range = HTTPResume.parseContentRange(value), range.first == start
            else { return fail(SegmentedDownload.unusableRange) }
            head = Head(isPartial: true, total: range.total, validator: validator, status: status, headers: headers)
        case 200 where acceptsWhole && start == 0:
            let length = HTTPResume.headerValue("Content-Length", in: headers).flatMap { Int64($0) }
            let total = length.flatMap { $0 >= 0 ? $0 : nil }
            head = Head(isPartial: false, total: total, validator: validator, status: status, headers: headers)
            // The server ignores ranges: this response is the whole file, however long.
            state.withLock { state in
                state.end = nil
                state.requestedEnd = nil
            }
        case 200, 416:
            return fail(SegmentedDownload.changed)
        default:
            let retryAfter = HTTPResume.headerValue("Retry-After", in: headers).flatMap {
                RetryPolicy.parseRetryAfter($0, now: .now)
            }
            return fail(.http(status: status, retryAfter: retryAfter))
        }
        return onHead(index, head).flatMapError { fail($0) }
    }

    private func fail(_ failure: TransferFailure) -> Result<Void, TransferFailure> {
        state.withLock { $0.failure = failure }
        return .failure(failure)
    }

    /// A redirect's body is not the file: only where it points is kept, for the client to follow.
    private func noteRedirect(_ status: Int, _ location: String) -> Result<Void, TransferFailure> {
        state.withLock { state in
            guard !state.stopped else { return .failure(.cancelled) }
            state.redirect = (status, location)
            return .success(())
        }
    }

    func body(_ buffer: ByteBuffer) -> Result<Void, TransferFailure> {
        let outcome: Result<(written: Int64, reachedEnd: Bool), TransferFailure> = state.withLock { state in
            if state.stopped { return .failure(.cancelled) }
            if state.redirect != nil { return .success((0, false)) }
            let room = state.end.map { max($0 - state.position, 0) } ?? Int64(buffer.readableBytes)
            let count = Int(min(Int64(buffer.readableBytes), room))
            if let failure = file.write(buffer.readableBytesView.prefix(count), at: state.position) {
                return .failure(failure)
            }
            state.position += Int64(count)
            if state.position - state.writebackStart >= Int64(file.writebackChunk) {
                file.startWriteback(from: state.writebackStart, to: state.position)
                state.writebackStart = state.position
            }
            return .success((Int64(count), state.end.map { state.position >= $0 } ?? false))
        }
        switch outcome {
        case .failure(let failure):
            return .failure(failure)
        case .success(let (written, reachedEnd)):
            if written > 0 { onWritten(index, written) }
            // The rest of the response belongs to another segment now: end this request.
            return reachedEnd ? .failure(SegmentedDownload.segmentEnded) : .success(())
        }
    }

    func abandon() {}

    func finish() throws(TransferFailure) -> DownloadResponse {
        let (redirect, failure, position, end) = state.withLock { state in
            (state.redirect, state.failure, state.position, min(state.end ?? .max, state.requestedEnd ?? .max))
        }
        if let failure { throw failure }
        if let redirect { return .redirect(status: redirect.status, location: redirect.location) }
        if end != .max, position != end {
            throw TransferFailure.network("the response ended at byte \(position) of a range ending at \(end)")
        }
        return .finished(bytesOnDisk: UInt64(max(position, 0)))
    }
}

/// The partial file that every segment writes into, at its own offsets.
final class SegmentFile: Sendable {
    let path: String
    /// Bytes each segment writes between two write-outs.
    let writebackChunk: UInt64
    private let descriptor: Mutex<Int32>

    /// Opens (creating) `path`; `truncate` for a download that starts from zero.
    init(path: String, truncate: Bool, writebackChunk: UInt64) throws(TransferFailure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0o644)
        guard fd >= 0 else { throw .fromErrno(errno, path: path) }
        self.path = path
        self.writebackChunk = writebackChunk
        descriptor = Mutex(fd)
    }

    /// Reserves the whole file's blocks at once, so that a disk too small fails before a byte is fetched.
    func preallocate(_ total: Int64) -> TransferFailure? {
        descriptor.withLock { fd -> TransferFailure? in
            guard fd >= 0 else { return nil }
            return Preallocation.reserve(fd: fd, from: 0, to: total, keepingSize: false, path: path)
        }
    }

    func write(_ bytes: ByteBufferView, at offset: Int64) -> TransferFailure? {
        descriptor.withLock { fd in
            guard fd >= 0 else { return .cancelled }
            return bytes.withUnsafeBytes { raw -> TransferFailure? in
                guard let base = raw.baseAddress else { return nil }
                var done = 0
                while done < raw.count {
                    let count = pwrite(fd, base + done, raw.count - done, off_t(offset) + off_t(done))
                    if count < 0 {
                        if errno == EINTR { continue }
                        return .fromErrno(errno, path: path)
                    }
                    done += count
                }
                return nil
            }
        }
    }

    func startWriteback(from start: Int64, to end: Int64) {
        descriptor.withLock { fd in
            if fd >= 0, end > start { Writeback.start(fd: fd, from: UInt64(start), to: UInt64(end)) }
        }
    }

    /// Syncs the file to the disk off the event loops (``BlockingWork``), then closes it; nothing can be written
    /// afterwards.
    func syncAndClose() async throws(TransferFailure) {
        let fd = take()
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        try await BlockingWork.sync(fd, path: path)
    }

    /// Closes the file without syncing it; nothing can be written afterwards.
    func close() {
        let fd = take()
        if fd >= 0 { Glibc.close(fd) }
    }

    /// The descriptor, which no write can use from now on.
    private func take() -> Int32 {
        descriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
    }
}
