import Glibc
import HaulCore
import NIOCore
import Synchronization

/// Writes the response of one download request into the partial file, from the offset the server agreed to
/// (`HTTPResume.interpret`): truncating for a full response, appending for a matching 206. A redirect is noted,
/// not written. A download into a folder has no partial file until its head names it (``headWork()``).
///
/// It knows nothing of the HTTP stack that feeds it (async-http-client's delegate, or the forward-proxy path), and
/// keeps its state in a `Mutex` because `stop()` comes from another thread and must guarantee that no byte is
/// written once it returns.
final class DownloadWriter: ResponseSink {
    fileprivate struct State {
        var fd: Int32 = -1
        /// The file of a response that ended, until ``syncToDisk()`` has synced and closed it.
        var finishedFD: Int32 = -1
        var bytesOnDisk: UInt64 = 0
        /// Where the bytes not yet handed to the disk begin (see `Writeback`).
        var writebackStart: UInt64 = 0
        var stopped = false
        var failure: TransferFailure?
        var alreadyComplete = false
        var redirect: (status: Int, location: String)?
        /// The resource's full size when the server said it.
        var expectedTotal: Int64?
        /// Where the body goes; nil until a download into a folder is named.
        var partialPath: String?
        /// A head accepted while the file is not named yet.
        var awaitingName: DownloadHead?
    }

    /// Names the file from a response's headers; returns the destination's path.
    typealias Naming = @Sendable (_ headers: [(String, String)]) async -> Result<String, TransferFailure>

    private let state: Mutex<State>
    private let naming: Naming?
    private let requestedOffset: Int64
    private let onHead: @Sendable (DownloadHead) -> Void
    private let onProgress: @Sendable (UInt64) -> Void

    /// `partialPath` is nil for a file not named yet: `naming` names it from the response's head.
    init(
        partialPath: String?, naming: Naming? = nil, requestedOffset: Int64,
        onHead: @escaping @Sendable (DownloadHead) -> Void, onProgress: @escaping @Sendable (UInt64) -> Void
    ) {
        state = Mutex(State(partialPath: partialPath))
        self.naming = naming
        self.requestedOffset = requestedOffset
        self.onHead = onHead
        self.onProgress = onProgress
    }

    /// From now on nothing more is written; the caller also ends the request.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.closeFile()
            state.closeFinishedFile()
        }
    }

    /// The response head: opens the partial file where the body goes, or notes a redirect.
    func head(status: Int, headers: [(String, String)]) -> Result<Void, TransferFailure> {
        if let location = Redirect.location(status: status, headers: headers) { return noteRedirect(status, location) }
        let decision = HTTPResume.interpret(status: status, headers: headers, requestedOffset: requestedOffset)
        let result: Result<DownloadHead?, TransferFailure> = state.withLock { state in
            guard !state.stopped else { return .failure(.cancelled) }
            guard let partialPath = state.partialPath else {
                // Named first (`headWork`); what is not a full response fails as it would otherwise.
                let total: Int64?
                switch decision {
                case .writeFromStart(let expected): total = expected
                case .fail(let failure):
                    state.failure = failure
                    return .failure(failure)
                case .append, .alreadyComplete:
                    // Nothing was asked for but the whole file: a 206 or 416 here is the server's mistake.
                    let failure = TransferFailure.network("the server answered a plain request with HTTP \(status)")
                    state.failure = failure
                    return .failure(failure)
                }
                state.awaitingName = DownloadHead(status: status, headers: headers, offset: 0, expectedTotal: total)
                return .success(nil)
            }
            switch decision {
            case .writeFromStart(let total):
                state.expectedTotal = total
                return state.open(partialPath, truncate: true, offset: 0, total: total).map {
                    DownloadHead(status: status, headers: headers, offset: 0, expectedTotal: total)
                }
            case .append(let offset, let total):
                state.expectedTotal = total
                return state.open(partialPath, truncate: false, offset: offset, total: total).map {
                    DownloadHead(status: status, headers: headers, offset: offset, expectedTotal: total)
                }
            case .alreadyComplete:
                state.alreadyComplete = true
                state.bytesOnDisk = UInt64(max(requestedOffset, 0))
                return .success(
                    DownloadHead(status: status, headers: headers, offset: requestedOffset, expectedTotal: requestedOffset)
                )
            case .fail(let failure):
                state.failure = failure
                // The partial file does not fit the resource any more: the next attempt starts from zero.
                if decision.discardsPartialFile { truncate(partialPath, 0) }
                return .failure(failure)
            }
        }
        return result.map { head in if let head { onHead(head) } }
    }

    /// Names the file of a download into a folder, then opens its partial file: the body waits for this.
    func headWork() -> (@Sendable () async -> Result<Void, TransferFailure>)? {
        guard let naming, let head = state.withLock({ $0.awaitingName }) else { return nil }
        return { [self] in
            let named = await naming(head.headers)
            let opened: Result<Void, TransferFailure> = state.withLock { state in
                guard !state.stopped else { return .failure(.cancelled) }
                state.awaitingName = nil
                let destination: String
                switch named {
                case .success(let path): destination = path
                case .failure(let failure):
                    state.failure = failure
                    return .failure(failure)
                }
                let partial = DownloadCompletion.partialPath(for: destination)
                state.partialPath = partial
                state.expectedTotal = head.expectedTotal
                return state.open(partial, truncate: true, offset: 0, total: head.expectedTotal)
            }
            return opened.map { onHead(head) }
        }
    }

    /// A redirect's body is not the file: only where it points is kept, for the client to follow.
    private func noteRedirect(_ status: Int, _ location: String) -> Result<Void, TransferFailure> {
        state.withLock { state in
            guard !state.stopped else { return .failure(.cancelled) }
            state.redirect = (status, location)
            return .success(())
        }
    }

    /// A part of the body, written at once.
    func body(_ buffer: ByteBuffer) -> Result<Void, TransferFailure> {
        let written: Result<UInt64?, TransferFailure> = state.withLock { state in
            if state.stopped { return .failure(.cancelled) }
            // The body of a redirect or of a 416 for a file already whole is not the resource.
            if state.alreadyComplete || state.redirect != nil { return .success(nil) }
            return state.write(buffer, path: state.partialPath ?? "").map { state.bytesOnDisk }
        }
        return written.map { total in if let total { onProgress(total) } }
    }

    /// The request failed: the file is closed, and whatever is on disk stays for the next attempt.
    func abandon() {
        state.withLock { $0.closeFile() }
    }

    /// The response ended: the redirect it asked for is returned, or its file is left for ``syncToDisk()``. Called on
    /// the connection's event loop, so it does not wait for the disk.
    func finish() throws(TransferFailure) -> DownloadResponse {
        try state.withLock { state throws(TransferFailure) -> DownloadResponse in
            // Every byte is written: from here the file waits for `syncToDisk()`, or for `stop()` to close it.
            state.finishedFD = state.fd
            state.fd = -1
            do throws(TransferFailure) {
                if let failure = state.failure { throw failure }
                if state.stopped { throw .cancelled }
                // A response may end cleanly yet short (a capped range): retried from the new offset.
                if let total = state.expectedTotal, !state.alreadyComplete, state.bytesOnDisk != UInt64(max(total, 0)) {
                    throw .network("the response ended at byte \(state.bytesOnDisk) of \(total)")
                }
            } catch {
                state.closeFinishedFile()
                throw error
            }
            if let redirect = state.redirect { return .redirect(status: redirect.status, location: redirect.location) }
            return .finished(bytesOnDisk: state.bytesOnDisk)
        }
    }

    /// Syncs the file of the response that ended to the disk, off the event loops (``BlockingWork``), and closes it.
    /// The caller runs it whenever ``finish()`` returned `.finished`; a `stop()` meanwhile does not wait for the disk.
    func syncToDisk() async throws(TransferFailure) {
        let taken = state.withLock { state -> (fd: Int32, path: String)? in
            guard state.finishedFD >= 0 else { return nil }
            defer { state.finishedFD = -1 }
            return (state.finishedFD, state.partialPath ?? "")
        }
        guard let (fd, path) = taken else { return }
        defer { Glibc.close(fd) }
        try await BlockingWork.sync(fd, path: path)
    }
}

extension DownloadWriter.State {
    mutating func open(_ path: String, truncate: Bool, offset: Int64, total: Int64?) -> Result<Void, TransferFailure> {
        closeFile()
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0o644)
        guard descriptor >= 0 else { return .failure(.fromErrno(errno, path: path)) }
        // The partial file may hold more than the server resumed from (a write cut short): drop the tail.
        guard ftruncate(descriptor, off_t(offset)) == 0, lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
            let failure = TransferFailure.fromErrno(errno, path: path)
            Glibc.close(descriptor)
            return .failure(failure)
        }
        if let total, let failure = Preallocation.reserve(
            fd: descriptor, from: offset, to: total, keepingSize: true, path: path
        ) {
            Glibc.close(descriptor)
            return .failure(failure)
        }
        fd = descriptor
        bytesOnDisk = UInt64(offset)
        writebackStart = bytesOnDisk
        return .success(())
    }

    mutating func write(_ buffer: ByteBuffer, path: String) -> Result<Void, TransferFailure> {
        guard fd >= 0 else { return .failure(.network("the server sent a body without a response head")) }
        let result: Result<Void, TransferFailure> = buffer.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return .success(()) }
            var start = 0
            while start < bytes.count {
                let count = Glibc.write(fd, base + start, bytes.count - start)
                if count < 0 {
                    if errno == EINTR { continue }
                    return .failure(.fromErrno(errno, path: path))
                }
                start += count
            }
            return .success(())
        }
        if case .success = result {
            bytesOnDisk += UInt64(buffer.readableBytes)
            if bytesOnDisk - writebackStart >= Writeback.chunk {
                Writeback.start(fd: fd, from: writebackStart, to: bytesOnDisk)
                writebackStart = bytesOnDisk
            }
        }
        return result
    }

    mutating func closeFile() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    mutating func closeFinishedFile() {
        if finishedFD >= 0 { Glibc.close(finishedFD) }
        finishedFD = -1
    }
}

/// How one download request ended.
enum DownloadResponse: Sendable {
    /// The whole response is on disk.
    case finished(bytesOnDisk: UInt64)
    /// The server pointed elsewhere; nothing was written.
    case redirect(status: Int, location: String)
}

/// A download attempt that reached the end of the resource.
package struct DownloadOutcome: Sendable {
    package let bytesOnDisk: UInt64
}
