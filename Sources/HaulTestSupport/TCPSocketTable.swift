import Foundation

/// A network namespace's table of TCP sockets as the kernel lists it (`/proc/net/tcp`, `/proc/<pid>/net/tcp6`).
package struct TCPSocketTable: Sendable {
    /// One row of the table.
    package struct Socket: Sendable {
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
