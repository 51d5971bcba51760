package import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call while writing a file atomically: which call, on which path, and the `errno` it set.
package struct AtomicFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed (`open`, `write`, `fsync`, `rename`, `mkdir`, …).
    package var operation: String
    /// The path the call was made on.
    package var path: String
    /// The `errno` it set.
    package var errno: Int32

    /// Creates the error for `operation` on `path` failing with `errno`.
    package init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    package var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// Replaces a file's contents so that, after a crash or power loss, it holds either the old contents or the new ones,
/// never a mix or nothing.
package enum AtomicFile: Sendable {
    /// Writes `data` to `url` atomically and durably.
    ///
    /// The data goes to `.<name>.tmp-<random>` in the destination's directory (so the rename cannot cross file
    /// systems), is fsynced, renamed over the destination, and the directory is fsynced so the rename itself survives
    /// a crash. Missing parent directories are created with mode 0700. The file gets mode 0600: Haul's state may hold
    /// URLs with credentials. A symbolic link at `url` is replaced, not followed. The temporary file is removed on
    /// failure. An error from the final directory sync (operation `fsync` on the directory) means the new contents
    /// are in place but might not survive a crash.
    package static func write(_ data: Data, to url: URL) throws(AtomicFileError) {
        let destination = url.standardizedFileURL
        let name = destination.lastPathComponent
        let path = destination.path(percentEncoded: false)
        guard url.isFileURL else {
            throw AtomicFileError(operation: "write", path: url.absoluteString, errno: EINVAL)
        }
        guard !destination.hasDirectoryPath, !name.isEmpty, name != "/" else {
            throw AtomicFileError(operation: "write", path: path, errno: EISDIR)
        }
        let directory = destination.deletingLastPathComponent().path(percentEncoded: false)
        try createDirectory(directory)

        let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = (directory.hasSuffix("/") ? directory : directory + "/") + ".\(name).tmp-\(suffix)"
        do {
            try writeDurably(data, to: temporary)
            try check(rename(temporary, path), "rename", temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }

    private static func writeDurably(_ data: Data, to path: String) throws(AtomicFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try check(fd, "open", path)
        do throws(AtomicFileError) {
            let failedErrno = data.withUnsafeBytes { buffer in writeAll(buffer, to: fd) }
            if let failedErrno {
                throw AtomicFileError(operation: "write", path: path, errno: failedErrno)
            }
            try retryingOnInterrupt("fsync", path) { fsync(fd) }
        } catch {
            close(fd)
            throw error
        }
        // After a successful fsync, a failing close has nothing left to lose, except on NFS, where it can report a
        // deferred write error: take it seriously. EINTR is not retried, as on Linux the descriptor is already gone.
        if close(fd) != 0 && errno != EINTR {
            throw AtomicFileError(operation: "close", path: path, errno: errno)
        }
    }

    /// Writes the whole buffer, resuming after short writes and EINTR; returns the errno of a failure.
    package static func writeAll(_ buffer: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
        var offset = 0
        while offset < buffer.count {
            let written = posixWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// `mkdir -p` with mode 0700 for the directories it creates; each new directory's parent is fsynced so that the
    /// new entry is durable too.
    private static func createDirectory(_ path: String) throws(AtomicFileError) {
        if mkdir(path, 0o700) == 0 {
            try syncDirectory(parent(of: path))
            return
        }
        switch errno {
        case EEXIST:
            // Whether it is really a directory shows when the temporary file is opened in it (ENOTDIR).
            return
        case ENOENT where parent(of: path) != path:
            try createDirectory(parent(of: path))
            try check(mkdir(path, 0o700), "mkdir", path)
            try syncDirectory(parent(of: path))
        case let failure:
            throw AtomicFileError(operation: "mkdir", path: path, errno: failure)
        }
    }

    private static func syncDirectory(_ path: String) throws(AtomicFileError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        // A directory we may write into but not read (mode 0300, a 0711 home) cannot be opened to be synced; the
        // entry is then as durable as the file system makes it unaided, which is no reason to fail the write.
        if fd < 0 && errno == EACCES { return }
        try check(fd, "open", path)
        defer { close(fd) }
        do {
            try retryingOnInterrupt("fsync", path) { fsync(fd) }
        } catch where error.errno == EINVAL || error.errno == ENOTSUP {
            // Some file systems cannot sync a directory; the rename is as durable there as it can be made.
        }
    }

    private static func parent(of path: String) -> String {
        let parent = URL(filePath: path, directoryHint: .isDirectory).deletingLastPathComponent()
        return parent.path(percentEncoded: false)
    }

    private static func retryingOnInterrupt(
        _ operation: String,
        _ path: String,
        _ call: () -> Int32
    ) throws(AtomicFileError) {
        while call() != 0 {
            guard errno == EINTR else {
                throw AtomicFileError(operation: operation, path: path, errno: errno)
            }
        }
    }

    private static func check(_ result: Int32, _ operation: String, _ path: String) throws(AtomicFileError) {
        if result < 0 {
            throw AtomicFileError(operation: operation, path: path, errno: errno)
        }
    }
}

/// `write(2)`, named apart from ``AtomicFile/write(_:to:)`` which would shadow it inside the enum.
private func posixWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}
