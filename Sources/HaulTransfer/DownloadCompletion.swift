import Glibc
package import HaulCore

/// The last steps of a download: the partial file is checked against the expected SHA-256 if one was given,
/// then renamed over the destination — never onto a file that appeared meanwhile unless `overwrite`.
package enum DownloadCompletion {
    /// `<destination>.haul-partial`, beside the destination so that the final rename stays on one file system.
    package static func partialPath(for destination: String) -> String { destination + SafeFileName.partialSuffix }

    /// Checks the partial file against the expected SHA-256; a mismatch removes it.
    package static func verify(_ partial: String, sha256 expected: String) throws(TransferFailure) {
        let actual = try digest(of: partial)
        guard actual == expected else {
            unlink(partial)
            throw .checksumMismatch(expected: expected, actual: actual)
        }
    }

    /// `verify` off the event loops (``BlockingWork``): hashing reads the whole file.
    package static func verifyOffLoop(_ partial: String, sha256 expected: String) async throws(TransferFailure) {
        try await BlockingWork.run { Result { () throws(TransferFailure) in try verify(partial, sha256: expected) } }
    }

    /// Renames the partial file over the destination.
    package static func place(destination: String, overwrite: Bool) throws(TransferFailure) {
        let partial = partialPath(for: destination)
        if overwrite {
            guard rename(partial, destination) == 0 else { throw .fromErrno(errno, path: destination) }
        } else if link(partial, destination) == 0 {
            // link() refuses an existing destination atomically, where rename() would replace it.
            unlink(partial)
        } else if errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK {
            // File systems without hard links (vfat, exfat, some FUSE and network mounts): check, then rename.
            // A file created between the two calls would be replaced; there is no atomic way left.
            guard access(destination, F_OK) != 0 else { throw .fileExists(destination) }
            guard rename(partial, destination) == 0 else { throw .fromErrno(errno, path: destination) }
        } else {
            throw .fromErrno(errno, path: destination)
        }
    }

    /// Hex SHA-256 of a file, read in large chunks.
    package static func digest(of path: String) throws(TransferFailure) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .fromErrno(errno, path: path) }
        defer { close(fd) }
        guard let hasher = SHA256Hasher() else { throw .fromErrno(ENOMEM, path: path) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fromErrno(errno, path: path)
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finalize()
    }

    /// The size of a file, 0 when it does not exist.
    package static func size(of path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
    }
}
