import CGlibcExtras
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
        if let error = write([(data, url)])[0] { throw error }
    }

    /// Writes several files as ``write(_:to:)`` does each, as one group commit: every file's data is handed to the
    /// disk before the first is synced, and each directory is synced once, after the last rename into it. A sync
    /// waits for the disk (a few milliseconds, far more on a busy or slow one), so a hundred records cost about what
    /// two do. Returns each file's error, in order, nil where it was written.
    package static func write(_ files: [(data: Data, url: URL)]) -> [AtomicFileError?] {
        var errors = [AtomicFileError?](repeating: nil, count: files.count)
        var existingDirectories: Set<String> = []
        /// The files renamed into each directory, which its sync makes durable.
        var renamed: [String: [Int]] = [:]
        // A few at a time, so that a large batch never holds more descriptors open than a process may have.
        for chunk in stride(from: 0, to: files.count, by: 128).map({ $0..<min($0 + 128, files.count) }) {
            var written: [(index: Int, fd: Int32, temporary: String, path: String, directory: String)] = []
            for index in chunk {
                do throws(AtomicFileError) {
                    let (path, directory) = try destination(of: files[index].url)
                    if !existingDirectories.contains(directory) {
                        try createDirectory(directory)
                        existingDirectories.insert(directory)
                    }
                    let (fd, temporary) = try writeTemporary(files[index].data, beside: path, in: directory)
                    written.append((index, fd, temporary, path, directory))
                } catch {
                    errors[index] = error
                }
            }
            for file in written {
                do throws(AtomicFileError) {
                    try finishTemporary(file.fd, file.temporary)
                    try check(rename(file.temporary, file.path), "rename", file.temporary)
                    renamed[file.directory, default: []].append(file.index)
                } catch {
                    unlink(file.temporary)
                    errors[file.index] = error
                }
            }
        }
        for (directory, indices) in renamed {
            do throws(AtomicFileError) {
                try syncDirectory(directory)
            } catch {
                for index in indices { errors[index] = error }
            }
        }
        return errors
    }

    /// The standardized path of `url` and its directory; refuses what cannot be a file.
    private static func destination(of url: URL) throws(AtomicFileError) -> (path: String, directory: String) {
        let destination = url.standardizedFileURL
        let name = destination.lastPathComponent
        let path = destination.path(percentEncoded: false)
        guard url.isFileURL else {
            throw AtomicFileError(operation: "write", path: url.absoluteString, errno: EINVAL)
        }
        guard !destination.hasDirectoryPath, !name.isEmpty, name != "/" else {
            throw AtomicFileError(operation: "write", path: path, errno: EISDIR)
        }
        return (path, destination.deletingLastPathComponent().path(percentEncoded: false))
    }

    /// Writes `data` to a new temporary file beside `path` and starts its write-out; returns its open descriptor.
    private static func writeTemporary(
        _ data: Data, beside path: String, in directory: String
    ) throws(AtomicFileError) -> (fd: Int32, temporary: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = (directory.hasSuffix("/") ? directory : directory + "/") + ".\(name).tmp-\(suffix)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try check(fd, "open", temporary)
        if let failedErrno = data.withUnsafeBytes({ buffer in writeAll(buffer, to: fd) }) {
            close(fd)
            unlink(temporary)
            throw AtomicFileError(operation: "write", path: temporary, errno: failedErrno)
        }
        // Best effort: the disk starts on this file while the next ones are written; the fsync below is the promise.
        _ = sync_file_range(fd, 0, 0, HAUL_SYNC_FILE_RANGE_WRITE)
        return (fd, temporary)
    }

    /// Syncs and closes a temporary file; the descriptor is closed whatever happens.
    private static func finishTemporary(_ fd: Int32, _ path: String) throws(AtomicFileError) {
        do throws(AtomicFileError) {
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
