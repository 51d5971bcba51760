import Foundation

extension Command.Running {
    /// The first line the process prints on standard output (an address, a port, `READY`), within `timeout` seconds.
    ///
    /// Read on a thread of its own, never on the Swift concurrency pool: the pool has one thread per core, and tests
    /// that start their servers and buses at once would hold all of it while the processes start, stalling every
    /// other test's timers and replies (a full run on a loaded 2-core machine stalled for a minute).
    package func firstLine(timeout: Double) async throws -> String {
        let descriptor = stdout.fileDescriptor
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Self.readLine(from: descriptor, timeout: timeout) })
            }
        }
    }

    /// ``firstLine(timeout:)`` of a process that prints it once it serves: when no line comes, the process is killed
    /// and reaped, and the error says that `program` did not start, with what it printed on standard error.
    package func firstLine(timeout: Double, of program: String) async throws -> String {
        do {
            return try await firstLine(timeout: timeout)
        } catch {
            throw TestSupportError("\(program) did not start: \(error)\(abandon())")
        }
    }

    /// Kills the process and reaps it; returns what it printed on standard error, after a space (empty if nothing).
    /// For a process that cannot serve: no other reader of its standard error may be running.
    @discardableResult
    package func abandon() -> String {
        kill(pid, SIGKILL)
        let errors = String(decoding: stderr.readDataToEndOfFile(), as: UTF8.self)
        _ = wait()
        return errors.isEmpty ? "" : " " + errors
    }

    /// Reads up to the first newline, giving up after `timeout` seconds or at end of file.
    private static func readLine(from fd: Int32, timeout: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var line = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestSupportError("timed out after \(timeout) s") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno != EINTR { throw TestSupportError("poll: \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            let count = read(fd, &byte, 1)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw TestSupportError("read: \(String(cString: strerror(errno)))")
            }
            guard count == 1 else { throw TestSupportError("it exited") }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }
}
