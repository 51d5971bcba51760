import Foundation
import HaulTestSupport

/// The bench's temporary folder: the files the server serves (`www/`) and one folder per downloader, so that
/// hauld and curl write to the same file system.
struct Workspace: Sendable {
    let root: URL
    let served: URL
    let hauldDownloads: URL
    let curlDownloads: URL

    /// The large file of the single-download figures and the small one of the concurrent figures.
    static let largeFile = "large.bin"
    static let smallFile = "small.bin"
    /// The file of the segmented phase.
    static let segmentedFile = "segmented.bin"
    /// The file of the control phase, which downloads it `transfers` times at once at `throttleRate`.
    static let throttledFile = "throttled.bin"
    /// At 2 MiB/s a download of it lasts 24 s, longer than the phase. hauld reserves a download's whole size when it
    /// starts, so 200 downloads of the 1 GiB file asked the disk for 200 GiB at once (`DiskFull`, and a full disk
    /// for everything else running); 200 of this one take 9.4 GiB.
    static let throttledSize = 48 << 20

    /// The file of the rate-limit phase: 30 s at its one task's limit (5 MiB/s), so that the task is still
    /// running when the steady part of its run (5 to 25 s) is recorded.
    static let rateLimitedFile = "rate-limited.bin"
    static let rateLimitedSize = 150 << 20

    init(largeSize: Int, smallSize: Int, segmentedSize: Int, rateLimited: Bool) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-bench-\(UUID().uuidString)")
        served = root.appendingPathComponent("www")
        hauldDownloads = root.appendingPathComponent("hauld")
        curlDownloads = root.appendingPathComponent("curl")
        for folder in [served, hauldDownloads, curlDownloads] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // World-readable, so that a server's worker processes may read what they serve.
        chmod(root.path, 0o755)
        chmod(served.path, 0o755)
        if largeSize > 0 { try ContentFile.write(served.appendingPathComponent(Self.largeFile), size: largeSize, seed: 1) }
        try ContentFile.write(served.appendingPathComponent(Self.smallFile), size: smallSize, seed: 2)
        try ContentFile.write(served.appendingPathComponent(Self.throttledFile), size: Self.throttledSize, seed: 4)
        if segmentedSize > 0 {
            try ContentFile.write(served.appendingPathComponent(Self.segmentedFile), size: segmentedSize, seed: 3)
        }
        if rateLimited {
            let url = served.appendingPathComponent(Self.rateLimitedFile)
            try ContentFile.write(url, size: Self.rateLimitedSize, seed: 5)
        }
    }

    func hauldFile(_ name: String) -> String { hauldDownloads.appendingPathComponent(name).path }
    func curlFile(_ name: String) -> String { curlDownloads.appendingPathComponent(name).path }

    /// Removes every download, so that each round starts on an empty folder (and the disk keeps its space).
    func clearDownloads() throws {
        for folder in [hauldDownloads, curlDownloads] {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// Incompressible bytes, written once per run: a sparse or constant file would spare the disk work a real
/// download costs.
enum ContentFile {
    static func write(_ url: URL, size: Int, seed: UInt64) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestSupportError("cannot create \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // xorshift64*: about a gigabyte a second, against a fifth of that for /dev/urandom.
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var block = [UInt64](repeating: 0, count: 1 << 17)  // 1 MiB
        var left = size
        while left > 0 {
            for index in block.indices {
                state ^= state >> 12
                state ^= state << 25
                state ^= state >> 27
                block[index] = state &* 0x2545_F491_4F6C_DD1D
            }
            let count = min(left, block.count * 8)
            let written = block.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, count) }
            guard written == count else {
                throw TestSupportError("cannot write \(url.path): \(String(cString: strerror(errno)))")
            }
            left -= count
        }
        guard fsync(fd) == 0 else { throw TestSupportError("cannot sync \(url.path)") }
    }
}
