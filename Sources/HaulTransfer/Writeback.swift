import CGlibcExtras

/// Hands a download's bytes to the disk while it runs, so that the `fsync` before the rename has little left to do.
///
/// Without it the whole file sits dirty in the page cache until that `fsync`, which then writes it all while the
/// network is idle: for 1 GiB on a disk of ~450 MB/s, 2.4 s added to the download. Starting the write-out of each
/// chunk as it fills (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`: asynchronous, no waiting for the disk) lets
/// the disk work alongside the network and keeps the dirty pages few.
enum Writeback {
    /// Bytes written between two write-outs.
    static let chunk: UInt64 = 4 << 20

    static func start(fd: Int32, from start: UInt64, to end: UInt64) {
        // Best effort: should it fail, the final fsync writes everything anyway.
        _ = sync_file_range(fd, Int64(start), Int64(end - start), HAUL_SYNC_FILE_RANGE_WRITE)
    }
}
