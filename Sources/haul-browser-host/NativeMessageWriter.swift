import Glibc

/// Writes native-messaging frames to the browser: the length in the machine's byte order, then the JSON.
struct NativeMessageWriter {
    /// The browsers' limit for a message to the extension.
    static let maximumBytes = 1 << 20

    let descriptor: Int32

    /// Writes `json` as one frame; false when it is too long or the browser has closed the pipe.
    func write(_ json: [UInt8]) -> Bool {
        guard json.count <= Self.maximumBytes else { return false }
        var length = UInt32(json.count)
        let prefix = withUnsafeBytes(of: &length) { Array($0) }
        return writeAll(prefix + json)
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + written, bytes.count - written)
            }
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
