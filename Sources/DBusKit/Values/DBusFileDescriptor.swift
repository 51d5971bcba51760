#if canImport(Glibc)
import Glibc
#endif

/// A Unix file descriptor passed over D-Bus (type `h`). It owns the descriptor and closes it when released.
public final class DBusFileDescriptor: Hashable, Sendable {
    public let rawValue: Int32

    /// Takes ownership of `fd`.
    public init(owning fd: Int32) { rawValue = fd }

    /// Duplicates `fd`, leaving the caller's descriptor untouched; nil when `dup` fails.
    public convenience init?(duplicating fd: Int32) {
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        self.init(owning: copy)
    }

    deinit { close(rawValue) }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
