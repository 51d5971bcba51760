import Glibc

/// Reads native-messaging frames: a 4-byte length in the machine's byte order, then that many bytes of UTF-8 JSON.
///
/// Blocking reads of one file descriptor: the host does one thing at a time, and the browser decides when input
/// comes and when it ends.
struct NativeMessageReader {
    /// What the next frame turned out to be.
    enum Frame: Equatable {
        case message([UInt8])
        /// Input ended between two frames: the browser is done with the host.
        case end
        /// Input ended inside a frame.
        case truncated
        /// The frame announces more than ``maximumBytes``; its body is left unread.
        case oversized(UInt32)
    }

    /// A request is a URL and a few headers, within hauld's 32 KiB of headers: a frame of more is not one.
    static let maximumBytes: UInt32 = 1 << 20

    let descriptor: Int32

    func next() -> Frame {
        guard let prefix = read(count: 4) else { return .truncated }
        if prefix.isEmpty { return .end }
        guard prefix.count == 4 else { return .truncated }
        let length = prefix.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        guard length <= Self.maximumBytes else { return .oversized(length) }
        guard let body = read(count: Int(length)), body.count == Int(length) else { return .truncated }
        return .message(body)
    }

    /// Up to `count` bytes, fewer only at the end of input; nil on a read error.
    private func read(count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + filled, count - filled)
            }
            if result > 0 {
                filled += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                return nil
            }
        }
        return Array(bytes[..<filled])
    }
}
