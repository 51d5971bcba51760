import CGlibcExtras
import Glibc
import HaulCore

/// Reserves a download's blocks as soon as its size is known, so that a disk too small fails at once with
/// `DiskFull`, before a byte is fetched, instead of after most of the file.
enum Preallocation {
    /// Reserves `[from, to)` of the open file `fd`. `keepingSize` leaves the file's length as it is (a single
    /// connection appends, and its length is what it has fetched); otherwise the length becomes `to`.
    static func reserve(fd: Int32, from start: Int64, to end: Int64, keepingSize: Bool, path: String) -> TransferFailure? {
        guard end > start, start >= 0 else { return nil }
        guard fallocate(fd, keepingSize ? HAUL_FALLOC_FL_KEEP_SIZE : 0, start, end - start) != 0 else { return nil }
        // A file system without fallocate is simply not preallocated.
        if errno == EOPNOTSUPP || errno == ENOSYS { return nil }
        return .fromErrno(errno, path: path)
    }
}
