import CGcrypt

/// SHA-256 through libgcrypt's message digests.
struct SHA256Hasher: ~Copyable {
    private let handle: gcry_md_hd_t

    /// libgcrypt wants `gcry_check_version` before any other call; a static is initialised once, thread-safely.
    private static let libraryReady = gcry_check_version(nil) != nil

    /// Nil when libgcrypt cannot give a digest (out of memory, or SHA-256 disabled by policy).
    init?() {
        var handle: gcry_md_hd_t?
        guard Self.libraryReady, gcry_md_open(&handle, Int32(GCRY_MD_SHA256.rawValue), 0) == 0, let handle else {
            return nil
        }
        self.handle = handle
    }

    deinit { gcry_md_close(handle) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        gcry_md_write(handle, bytes.baseAddress, bytes.count)
    }

    /// The digest in lower-case hex.
    consuming func finalize() -> String {
        // gcry_md_read finalises the digest and returns it inside the handle, so it is read before the handle is
        // closed. It is nil only for an algorithm the handle was not opened with: an empty digest matches nothing.
        let hex = gcry_md_read(handle, Int32(GCRY_MD_SHA256.rawValue)).map { bytes in
            UnsafeBufferPointer(start: bytes, count: 32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        gcry_md_close(handle)
        discard self
        return hex ?? ""
    }
}
