import Foundation

/// A network namespace's table of TCP sockets as the kernel lists it (`/proc/net/tcp`, `/proc/<pid>/net/tcp6`).
package struct TCPSocketTable: Sendable {
    /// One row of the table.
    package struct Socket: Sendable, Equatable {
        /// The local address and port in hex, as the kernel writes them: `0100007F:1F90` is 127.0.0.1:8080.
        package let localAddress: String
        /// The state in hex: ``TCPSocketTable/listening``, `01` established, …
        package let state: String
        /// The socket's inode, as `/proc/<pid>/fd` links name it (`socket:[inode]`); "0" for one no process holds.
        package let inode: String

        /// Whether it listens on `port`, at any address.
        package func listens(on port: Int) -> Bool {
            state == TCPSocketTable.listening && localAddress.hasSuffix(":" + String(format: "%04X", port))
        }
    }

    /// The state of a listening socket.
    package static let listening = "0A"

    package let sockets: [Socket]

    /// Reads the table at `path`.
    package init(path: String) throws {
        // Columns: sl local rem st tx:rx tr:when retrnsmt uid timeout inode …; the first line names them.
        sockets = try ProcFile.read(path).split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: " ")
            guard columns.count > 9 else { return nil }
            return Socket(localAddress: String(columns[1]), state: String(columns[3]), inode: String(columns[9]))
        }
    }
}

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
