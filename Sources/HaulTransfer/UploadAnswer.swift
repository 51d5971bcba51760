import FoundationEssentials
import HaulCore
import NIOCore
import Synchronization

/// The server's answer to one upload request, and the progress of its body.
final class UploadAnswer: ResponseSink {
    private struct Answer {
        var status = 0
        var retryAfter: Duration?
        var location: String?
    }

    private let sentBytes = Mutex<UInt64>(0)
    private let answer = Mutex(Answer())
    private let total: Int64
    private let onProgress: @Sendable (UInt64, Int64) -> Void

    init(total: Int64, onProgress: @escaping @Sendable (UInt64, Int64) -> Void) {
        self.total = total
        self.onProgress = onProgress
    }

    func sent(_ count: Int) {
        let bytes = sentBytes.withLock { sent in
            sent += UInt64(count)
            return sent
        }
        onProgress(bytes, total)
    }

    func head(status: Int, headers: [(String, String)]) -> Result<Void, TransferFailure> {
        // Parsed now: an HTTP-date counts from when the server said it.
        let retryAfter = HTTPResume.headerValue("Retry-After", in: headers).flatMap {
            RetryPolicy.parseRetryAfter($0, now: Date())
        }
        let location = Redirect.location(status: status, headers: headers)
        answer.withLock { $0 = Answer(status: status, retryAfter: retryAfter, location: location) }
        return .success(())
    }

    func body(_ buffer: ByteBuffer) -> Result<Void, TransferFailure> { .success(()) }

    func abandon() {}

    /// A 2xx, or a 303 ("see other": the upload was taken, its result is elsewhere), is a success; the other
    /// redirects send the same body on to their target.
    func finish() throws(TransferFailure) -> UploadResponse {
        let answer = answer.withLock { $0 }
        if answer.status != 303, let location = answer.location {
            return .redirect(status: answer.status, location: location)
        }
        guard (200..<300).contains(answer.status) || answer.status == 303 else {
            throw TransferFailure.http(status: answer.status, retryAfter: answer.retryAfter)
        }
        return .finished(status: answer.status)
    }
}

/// How one upload request ended.
enum UploadResponse: Sendable {
    case finished(status: Int)
    case redirect(status: Int, location: String)
}
