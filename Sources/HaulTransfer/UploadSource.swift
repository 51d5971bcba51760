import AsyncHTTPClient
import FoundationEssentials
import Glibc
import HaulCore
import NIOCore
import NIOHTTP1
import Synchronization

/// A file streamed as a request body, read in chunks as the connection can take them.
struct UploadSource: Sendable {
    let path: String
    let size: Int64

    init(path: String) throws(TransferFailure) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .fromErrno(errno, path: path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw TransferFailure(kind: .invalidArgument, message: "\(path) is not a regular file", isTransient: false)
        }
        self.path = path
        size = Int64(info.st_size)
    }

    var body: HTTPClient.Body {
        let path = path
        return .stream(contentLength: size) { writer in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let failure = TransferFailure.fromErrno(errno, path: path)
                return writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw failure }
            }
            return UploadSource.send(fd: fd, path: path, writer: writer).always { _ in close(fd) }
        }
    }

    /// Reads and writes one chunk after another; each write's future gates the next read (back-pressure).
    private static func send(fd: Int32, path: String, writer: HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void> {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256 * 1024)
        var failure: TransferFailure?
        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 256 * 1024) { pointer in
            let count = read(fd, pointer.baseAddress, pointer.count)
            if count < 0 { failure = .fromErrno(errno, path: path) }
            return max(count, 0)
        }
        // A read error is not the end of the file: fail the request with it.
        if let failure { return writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw failure } }
        guard count > 0 else { return writer.write(.byteBuffer(ByteBuffer())) }
        return writer.write(.byteBuffer(buffer)).flatMap { send(fd: fd, path: path, writer: writer) }
    }
}

/// Counts what was sent and reads the response status of an upload (with the `Retry-After` of a failure, which
/// the retry back-off honours as for downloads).
final class UploadDelegate: HTTPClientResponseDelegate {
    typealias Response = Int

    private struct Answer {
        var status = 0
        var retryAfter: Duration?
    }

    private let sent = Mutex<UInt64>(0)
    private let answer = Mutex(Answer())
    private let total: Int64
    private let onProgress: @Sendable (UInt64, Int64) -> Void

    init(total: Int64, onProgress: @escaping @Sendable (UInt64, Int64) -> Void) {
        self.total = total
        self.onProgress = onProgress
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        let bytes = sent.withLock { sent in
            sent += UInt64(part.readableBytes)
            return sent
        }
        onProgress(bytes, total)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        // Parsed now: an HTTP-date counts from when the server said it.
        let retryAfter = head.headers.first(name: "Retry-After").flatMap {
            RetryPolicy.parseRetryAfter($0, now: Date())
        }
        answer.withLock { $0 = Answer(status: Int(head.status.code), retryAfter: retryAfter) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        let answer = answer.withLock { $0 }
        guard (200..<300).contains(answer.status) else {
            throw TransferFailure.http(status: answer.status, retryAfter: answer.retryAfter)
        }
        return answer.status
    }
}
