#if canImport(Glibc)
import Glibc
#endif

/// Values a large body repeats, decoded once and then shared by `WireReader`.
///
/// A `GetManagedObjects` reply of 10,000 objects repeats the same interface and property names and mostly the same
/// small values (`false`, `0`, `""`, `"suspended"`). Decoded one by one, each name longer than 15 bytes (Swift stores
/// shorter ones inline) and each variant (a boxed case) is an allocation of its own: most of the client's cost, much
/// of it glibc growing and trimming its heap. Shared, a repeat costs a lookup and a retain. Sharing is invisible to
/// the caller, since values are immutable.
///
/// Each table is direct-mapped: a slot keeps the last value whose key fell on it, so a collision only costs a miss.
struct SharedValues {
    /// A variant of a basic type whose wire payload (after alignment and, for a string, its length) fits 16 bytes.
    struct VariantKey: Equatable {
        let code: UInt8
        let length: UInt8
        let low: UInt64
        let high: UInt64
    }

    /// Bodies at least this large share their values; a smaller one is not worth the tables.
    static let minimumBodyLength = 64 * 1024
    private static let slots = 512

    private var strings = [String?](repeating: nil, count: Self.slots)
    private var variants = [(key: VariantKey, value: DBusValue)?](repeating: nil, count: Self.slots)

    /// The string of `utf8`, the one decoded before if it had the same bytes.
    mutating func string(_ utf8: UnsafeRawBufferPointer) -> String {
        guard utf8.count > 15, let base = utf8.baseAddress else { return String(decoding: utf8, as: UTF8.self) }
        let first = utf8.loadUnaligned(as: UInt64.self)
        let last = utf8.loadUnaligned(fromByteOffset: utf8.count - 8, as: UInt64.self)
        let slot = Self.slot(first &* 31 ^ last ^ UInt64(utf8.count))
        if let shared = strings[slot], Self.string(shared, equals: base, count: utf8.count) { return shared }
        let string = String(decoding: utf8, as: UTF8.self)
        strings[slot] = string
        return string
    }

    /// The variant decoded before under `key`, if any.
    func variant(_ key: VariantKey) -> DBusValue? {
        guard let entry = variants[Self.slot(key)], entry.key == key else { return nil }
        return entry.value
    }

    mutating func remember(_ variant: DBusValue, as key: VariantKey) {
        variants[Self.slot(key)] = (key, variant)
    }

    private static func slot(_ key: VariantKey) -> Int {
        slot(key.low &* 0x9E37_79B9_7F4A_7C15 ^ key.high &* 31 ^ UInt64(key.code) << 8 ^ UInt64(key.length))
    }

    private static func slot(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: (hash ^ hash >> 29) & UInt64(slots - 1))
    }

    private static func string(_ string: String, equals bytes: UnsafeRawPointer, count: Int) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { utf8 in
            guard utf8.count == count, let base = utf8.baseAddress else { return false }
            return memcmp(base, bytes, count) == 0
        } ?? false
    }
}
