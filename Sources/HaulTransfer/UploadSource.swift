import AsyncHTTPClient
import FoundationEssentials
import Glibc
import HaulCore
import NIOCore
import NIOHTTP1
import NIOPosix
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

    /// The file as async-http-client's request body; `rate` paces it.
    func body(rate: RateMeter?) -> HTTPClient.Body {
        let path = path
        return .stream(contentLength: size) { writer in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let failure = TransferFailure.fromErrno(errno, path: path)
                return writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw failure }
            }
            let loop = MultiThreadedEventLoopGroup.singleton.any()
            return UploadSource.send(fd: fd, path: path, writer: writer, rate: rate, on: loop).always { _ in close(fd) }
        }
    }

    /// Reads and writes one chunk after another; each write's future gates the next read (back-pressure), and so does
    /// the rate limit, which also caps the size of the next chunk.
    private static func send(
        fd: Int32, path: String, writer: HTTPClient.Body.StreamWriter, rate: RateMeter?, on loop: any EventLoop
    ) -> EventLoopFuture<Void> {
        let allowance = rate?.allowance(on: loop) ?? loop.makeSucceededFuture(nil)
        return allowance.flatMap { maxBytes in
            switch readChunk(fd: fd, path: path, maxBytes: maxBytes) {
            // A read error is not the end of the file: fail the request with it.
            case .failure(let failure): return writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw failure }
            case .success(nil): return writer.write(.byteBuffer(ByteBuffer()))
            case .success(let chunk?):
                rate?.consumed(chunk.readableBytes)
                return writer.write(.byteBuffer(chunk)).flatMap {
                    send(fd: fd, path: path, writer: writer, rate: rate, on: loop)
                }
            }
        }
    }

    /// The largest chunk read at once.
    static let chunkSize = 256 * 1024

    /// The next chunk of the open file `fd`, at most `maxBytes` (nil: ``chunkSize``), or nil at its end.
    static func readChunk(fd: Int32, path: String, maxBytes: Int? = nil) -> Result<ByteBuffer?, TransferFailure> {
        var buffer = ByteBuffer()
        var failure: TransferFailure?
        let size = min(max(maxBytes ?? chunkSize, 1), chunkSize)
        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { pointer in
            let count = read(fd, pointer.baseAddress, size)
            if count < 0 { failure = .fromErrno(errno, path: path) }
            return max(count, 0)
        }
        if let failure { return .failure(failure) }
        return .success(count > 0 ? buffer : nil)
    }
}
