package import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the files hauld finds in its state folder at start-up, before it answers anything (the task records, the
/// settings files, the highest id removed), and the user's `user-dirs.dirs` while it answers.
///
/// Only a regular file is read, and only up to a limit: a symbolic link at a record's name would make hauld read
/// whatever it points to, and a huge file would take its memory. It is opened without blocking, so a FIFO left there
/// cannot hold the start, or the call being answered, either.
package enum RegularFile {
    /// Far above any settings file hauld writes (a few hundred bytes of JSON): a larger file is not one.
    package static let largestSettings = 64 << 10

    /// The contents of the regular file at `path`, which must hold at most `limit` bytes. `followingLinks` for a
    /// file of the user's, which dotfile managers often link to: a link of hauld's own state folder is refused.
    package static func contents(
        of path: String, limit: Int, followingLinks: Bool = false
    ) throws(AtomicFileError) -> Data {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw AtomicFileError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw AtomicFileError(operation: "fstat", path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            let reason = status.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL
            throw AtomicFileError(operation: "open (not a regular file)", path: path, errno: reason)
        }
        guard status.st_size <= limit else { throw AtomicFileError(operation: "read", path: path, errno: EFBIG) }
        var data = Data(count: Int(status.st_size))
        var filled = 0
        let failure: Int32? = data.withUnsafeMutableBytes { buffer in
            while filled < buffer.count {
                let count = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
                if count > 0 {
                    filled += count
                } else if count == 0 {
                    return nil  // shorter than it was: what is there is the file
                } else if errno != EINTR {
                    return errno
                }
            }
            return nil
        }
        if let failure { throw AtomicFileError(operation: "read", path: path, errno: failure) }
        if filled < data.count { data.removeSubrange(filled...) }
        return data
    }
}
