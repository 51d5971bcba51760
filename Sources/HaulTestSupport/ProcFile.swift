import Foundation

/// Files of `/proc`.
enum ProcFile {
    /// Reads to the end: `/proc` files report a size of 0, and `String(contentsOfFile:)` stops after the first 4 KiB
    /// of one (about 26 sockets of a TCP table).
    static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestSupportError("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
