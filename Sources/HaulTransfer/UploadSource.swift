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
        switch readChunk(fd: fd, path: path) {
        // A read error is not the end of the file: fail the request with it.
        case .failure(let failure): writer.write(.byteBuffer(ByteBuffer())).flatMapThrowing { throw failure }
        case .success(nil): writer.write(.byteBuffer(ByteBuffer()))
        case .success(let chunk?): writer.write(.byteBuffer(chunk)).flatMap { send(fd: fd, path: path, writer: writer) }
        }
    }

    /// The next chunk of the open file `fd`, or nil at its end.
    static func readChunk(fd: Int32, path: String) -> Result<ByteBuffer?, TransferFailure> {
        var buffer = ByteBuffer()
        var failure: TransferFailure?
        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 256 * 1024) { pointer in
            let count = read(fd, pointer.baseAddress, pointer.count)
            if count < 0 { failure = .fromErrno(errno, path: path) }
            return max(count, 0)
        }
        if let failure { return .failure(failure) }
        return .success(count > 0 ? buffer : nil)
    }
}
