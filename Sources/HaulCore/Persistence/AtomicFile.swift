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

    /// Nothing is at the path (a file read only when it exists, such as a settings file, is then no problem).
    package var isMissing: Bool { errno == ENOENT }
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
    /// two do; from ``filesSyncedTogether`` files on, their data is synced by one `syncfs`. Returns each file's error,
    /// in order, nil where it was written.
    ///
    /// A file with a ``Spare`` (one rewritten often, as a task's record) is replaced without creating or freeing an
    /// inode: see ``spare(of:)``.
    package static func write(_ files: [(data: Data, url: URL, spare: Spare)]) -> [AtomicFileError?] {
        var errors = [AtomicFileError?](repeating: nil, count: files.count)
        var existingDirectories: Set<String> = []
        /// The files renamed into each directory, which its sync makes durable.
        var renamed: [String: [Int]] = [:]
        /// The spares holding a file's old contents, emptied once their directory's sync has made the swap durable.
        var swapped: [String: [String]] = [:]
        // A few at a time, so that a large batch never holds more descriptors open than a process may have.
        for chunk in stride(from: 0, to: files.count, by: 128).map({ $0..<min($0 + 128, files.count) }) {
            var written: [WrittenFile] = []
            for index in chunk {
                do throws(AtomicFileError) {
                    let (path, directory) = try destination(of: files[index].url)
                    if !existingDirectories.contains(directory) {
                        try createDirectory(directory)
                        existingDirectories.insert(directory)
                    }
                    let spare = files[index].spare == .none ? nil : openSpare(beside: path)
                    let opened = if let spare { spare } else { try openTemporary(beside: path, in: directory) }
                    try writeContents(
                        files[index].data, to: opened.fd, at: opened.temporary, over: opened.size,
                        startingWriteOut: chunk.count < filesSyncedTogether
                    )
                    written.append(
                        WrittenFile(
                            index: index, fd: opened.fd, temporary: opened.temporary, isSpare: spare != nil,
                            path: path, directory: directory
                        )
                    )
                } catch {
                    errors[index] = error
                }
            }
            let synced = syncFileSystems(of: written, into: &errors)
            for file in written where errors[file.index] == nil {
                do throws(AtomicFileError) {
                    try finishTemporary(file.fd, file.temporary, synced: synced)
                    if try replace(file.path, with: file.temporary, swapping: file.isSpare),
                        files[file.index].spare == .erased
                    {
                        swapped[file.directory, default: []].append(file.temporary)
                    }
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
                // The old contents (a URL's password, say) are kept no longer than the swap needs them.
                for spare in swapped[directory] ?? [] { empty(spare) }
            } catch {
                for index in indices { errors[index] = error }
            }
        }
        return errors
    }

    /// From this many files in a batch on, their data is made durable by one `syncfs` of their file system rather than
    /// an `fsync` each. Each sync ends with the disk flushing its cache, which costs the same for one small file as for
    /// a thousand: ten thousand records (a `SuspendAll`) took 3.5 s or more one by one. A `syncfs` also writes whatever
    /// else is waiting on that file system, so small batches keep the `fsync`s.
    package static var filesSyncedTogether: Int { 32 }

    /// Syncs the file systems of a chunk's files when there are enough of them (``filesSyncedTogether``): returns
    /// whether it did, with each file of a file system that failed to sync given that error, closed and removed.
    private static func syncFileSystems(
        of written: [WrittenFile], into errors: inout [AtomicFileError?]
    ) -> Bool {
        guard written.count >= filesSyncedTogether else { return false }
        // One descriptor per directory stands for its file system (two directories on one cost a second, quick sync).
        for directory in Set(written.map(\.directory)) {
            guard let file = written.first(where: { $0.directory == directory }) else { continue }
            do throws(AtomicFileError) {
                try retryingOnInterrupt("syncfs", file.temporary) { syncfs(file.fd) }
            } catch {
                for file in written where file.directory == directory {
                    close(file.fd)
                    unlink(file.temporary)
                    errors[file.index] = error
                }
            }
        }
        return true
    }

    /// A file of a batch whose contents are written, waiting to be synced and put in place.
    private struct WrittenFile {
        /// Its place in the batch.
        var index: Int
        var fd: Int32
        /// The temporary file or spare holding the new contents.
        var temporary: String
        var isSpare: Bool
        var path: String
        var directory: String
    }

    /// Writes several files as ``write(_:to:)`` does each, in one group commit (none keeps a spare).
    package static func write(_ files: [(data: Data, url: URL)]) -> [AtomicFileError?] {
        write(files.map { ($0.data, $0.url, Spare.none) })
    }

    /// Removes the file at `url` and its spare; a file that is not there is not an error.
    package static func remove(_ url: URL) throws(AtomicFileError) {
        let path = url.standardizedFileURL.path(percentEncoded: false)
        unlink(spare(of: path))
        if unlink(path) != 0 && errno != ENOENT {
            throw AtomicFileError(operation: "unlink", path: path, errno: errno)
        }
    }

    /// What a write does with the spare of a file (``spare(of:)``).
    package enum Spare: Sendable, Equatable {
        /// No spare: each write creates a temporary file, and the old contents' inode is freed.
        case none
        /// The spare keeps the old contents until the next write overwrites them: for contents that hold no secret.
        case kept
        /// The spare's old contents are overwritten with zeros once the swap is durable: they may hold a secret (a
        /// URL's password, say), which must be kept no longer than needed. The zeros cost four more system calls and a
        /// second block to write back.
        case erased
    }

    /// The spare of the file at `path`: `.<name>.spare` beside it. A write overwrites the spare, syncs it and swaps it
    /// with the file (`renameat2` with `RENAME_EXCHANGE`), so that the spare then holds the old contents, and (for a
    /// ``Spare/erased`` one) overwrites those with zeros once the swap is durable. The usual new file renamed over the
    /// old one frees an inode per write, and on ext4 without a journal creating a file passes over every inode freed
    /// in the last minute (six while its table is not yet written back), one by one: at a thousand rewrites a second,
    /// each creation read thousands of inodes (1.1 ms a rewrite, against 0.12 ms with a spare, measured on this
    /// project's machines). Zeros rather than truncation keep the spare's blocks: freeing them and allocating them
    /// again at the next write took three times as long as the rest of a rewrite.
    package static func spare(of path: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        return String(path[..<slash]) + "." + String(path[slash...]) + ".spare"
    }

    /// The spare of `path`, opened for writing, and its size (``writeContents(_:to:at:over:startingWriteOut:)``
    /// overwrites it and cuts it to the new length); nil when it cannot serve (then a temporary file does). Only a
    /// regular file of mode 0600 with one link serves: anything else at that name is removed and replaced.
    private static func openSpare(beside path: String) -> (fd: Int32, temporary: String, size: Int64)? {
        let spare = spare(of: path)
        // O_NONBLOCK: opening a FIFO someone left there must not hang the writer. No O_TRUNC: a hard link of that name
        // would share its inode with another file, which the checks below refuse to write.
        var fd = open(spare, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        var status = stat()
        if fd >= 0 && (fstat(fd, &status) != 0 || status.st_mode & S_IFMT != S_IFREG || status.st_nlink != 1
            || status.st_mode & 0o7777 != 0o600)
        {
            close(fd)
            fd = -1
        }
        if fd >= 0 { return (fd, spare, Int64(status.st_size)) }
        unlink(spare)
        fd = open(spare, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        return fd < 0 ? nil : (fd, spare, 0)
    }

    /// Puts the synced file at `temporary` in place at `path`; returns true when the two were swapped (`temporary`,
    /// a spare, then holds the old contents), false when `temporary` was renamed over whatever `path` was. Only a
    /// regular file is swapped: a symbolic link at `path` is replaced, not kept as a spare.
    private static func replace(
        _ path: String, with temporary: String, swapping: Bool
    ) throws(AtomicFileError) -> Bool {
        var status = stat()
        if swapping, lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
            if renameat2(AT_FDCWD, temporary, AT_FDCWD, path, HAUL_RENAME_EXCHANGE) == 0 { return true }
            // A file system that cannot swap names (EINVAL) gets the plain rename below.
            guard errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP else {
                throw AtomicFileError(operation: "rename", path: temporary, errno: errno)
            }
        }
        try check(rename(temporary, path), "rename", temporary)
        return false
    }

    /// Overwrites with zeros a spare that holds a file's old contents; one that is not a regular file of one link, or
    /// cannot be overwritten, is removed.
    private static func empty(_ spare: String) {
        let fd = open(spare, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        var status = stat()
        var emptied =
            fd >= 0 && fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_nlink == 1
        let zeros = [UInt8](repeating: 0, count: 4096)
        var left = Int(status.st_size)
        while emptied && left > 0 {
            let count = min(left, zeros.count)
            emptied = zeros.withUnsafeBytes { writeAll(UnsafeRawBufferPointer(rebasing: $0[..<count]), to: fd) } == nil
            left -= count
        }
        if fd >= 0 { close(fd) }
        if !emptied { unlink(spare) }
    }

    /// The standardized path of `url` and its directory; refuses what cannot be a file.
    private static func destination(of url: URL) throws(AtomicFileError) -> (path: String, directory: String) {
        // The usual case, a record's path as the store made it, without the URL's own (costlier) standardizing.
        let raw = url.path(percentEncoded: false)
        let components = raw.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        if url.isFileURL, raw.hasPrefix("/"), !raw.hasSuffix("/"), let slash = raw.lastIndex(of: "/"),
            !components.contains(where: { $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) })
        {
            return (raw, String(raw[...slash]))
        }
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

    /// Creates a new temporary file beside `path`; returns its open descriptor.
    private static func openTemporary(
        beside path: String, in directory: String
    ) throws(AtomicFileError) -> (fd: Int32, temporary: String, size: Int64) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = (directory.hasSuffix("/") ? directory : directory + "/") + ".\(name).tmp-\(suffix)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try check(fd, "open", temporary)
        return (fd, temporary, 0)
    }

    /// Writes `data` over the start of the file open at `fd`, which holds `size` bytes, cuts the file there if it was
    /// longer, and (when `startingWriteOut`) starts its write-out; on failure the file is closed and removed.
    private static func writeContents(
        _ data: Data, to fd: Int32, at temporary: String, over size: Int64, startingWriteOut: Bool
    ) throws(AtomicFileError) {
        var failedErrno = data.withUnsafeBytes { buffer in writeAll(buffer, to: fd) }
        if failedErrno == nil && size > data.count && ftruncate(fd, off_t(data.count)) != 0 { failedErrno = errno }
        if let failedErrno {
            close(fd)
            unlink(temporary)
            throw AtomicFileError(operation: "write", path: temporary, errno: failedErrno)
        }
        // Best effort: the disk starts on this file while the next ones are written; the fsync below is the promise.
        // A batch synced by `syncfs` leaves the write-out to it, which merges the files' writes.
        if startingWriteOut { _ = sync_file_range(fd, 0, 0, HAUL_SYNC_FILE_RANGE_WRITE) }
    }

    /// Syncs (unless its file system is `synced` already) and closes a temporary file; the descriptor is closed
    /// whatever happens.
    private static func finishTemporary(_ fd: Int32, _ path: String, synced: Bool) throws(AtomicFileError) {
        do throws(AtomicFileError) {
            if !synced { try retryingOnInterrupt("fsync", path) { fsync(fd) } }
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
