import HaulCore
import NIOPosix

/// Work that waits for the disk (hashing a whole file, an `fsync`), run on NIO's thread pool for blocking work: the
/// event loops carry every transfer and, in hauld, Swift concurrency, and all limited connections share one of them.
enum BlockingWork {
    static func run(_ work: @escaping @Sendable () -> Result<Void, TransferFailure>) async throws(TransferFailure) {
        let outcome: Result<Void, TransferFailure>
        do {
            outcome = try await NIOThreadPool.singleton.runIfActive(work)
        } catch {
            // Suspended or stopped while waiting for a pool thread (a shut-down pool, the only other refusal, never
            // happens to the singleton): the file stays for the next attempt.
            throw .cancelled
        }
        try outcome.get()
    }

    /// `fsync`s `fd` (of the file at `path`) off the event loops.
    static func sync(_ fd: Int32, path: String) async throws(TransferFailure) {
        try await run { fsync(fd) == 0 ? .success(()) : .failure(.fromErrno(errno, path: path)) }
    }
}
