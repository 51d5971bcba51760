import CGlibcExtras

/// glibc's allocator, set for a daemon whose memory must come back after a load.
///
/// - glibc maps a block of its own for every allocation above its mmap threshold, and unmaps it when it is freed. But
///   it raises that threshold by itself to the size of the largest such block freed (up to 32 MiB), and the arenas'
///   trim threshold to twice that: after one huge message (a caller's 4 MiB string), every block below 4 MiB is carved
///   from the arenas, where it stays once freed, and nothing is trimmed before 8 MiB are free at an arena's top.
///   Setting the thresholds fixes them.
/// - glibc gives each thread that allocates while another holds the lock an arena of its own (up to eight per core):
///   after a burst of calls, seven arenas each kept the pages that a few live blocks pinned, and `malloc_trim` cannot
///   hand back a page in use. One arena keeps them together: 60 s after a hostile barrage, a lean hauld's anonymous
///   memory was 2.8 MB above a fresh one's with one arena, 5.0 MB with glibc's default. Each thread's cache of small
///   blocks (tcache) still takes most allocations without the lock.
package enum MallocTuning {
    /// Above the largest buffer a transfer allocates again and again (an upload's 256 KiB chunk), which would
    /// otherwise cost a map, a page fault per page and an unmap each time.
    static let mmapThreshold: Int32 = 512 * 1024
    /// A free top of the arena larger than this goes back at once.
    static let trimThreshold: Int32 = 1024 * 1024
    static let arenas: Int32 = 1

    /// Call before anything allocates much, and before any thread starts: at the start of hauld's `main`.
    package static func apply() {
        mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        mallopt(M_TRIM_THRESHOLD, trimThreshold)
        mallopt(M_ARENA_MAX, arenas)
    }
}
