/// Reads a message body in the D-Bus wire format, the counterpart of `WireWriter`.
///
/// It only sees bytes libdbus has already validated (a message libdbus loaded), yet it checks every bound: a mistake
/// here ends in a refused message, never a trap.
struct WireReader {
    enum Failure: Error {
        /// The bytes do not hold what the signature says.
        case malformed
        /// A file descriptor, which only libdbus can hand out (it duplicates the one the message carries).
        case fileDescriptor
    }

    private let bytes: UnsafeRawBufferPointer
    private let bigEndian: Bool
    private var offset = 0
    private var shared: SharedValues?
    /// The elements of the arrays and the entries of the dictionaries being read, each container's after its
    /// parent's so far: a container is gathered here and copied out at its exact size, where appending to an array of
    /// its own would allocate it again at every doubling.
    private var elements: [DBusValue] = []
    private var entries: [DBusDictEntry] = []

    /// libdbus refuses a message nested deeper than 64 containers, variants included, before this reads it: the
    /// bound only guards the stack.
    private static let deepest = 70

    /// `body` must start at an offset of the message that is a multiple of 8, as a body does.
    init(body: UnsafeRawBufferPointer, bigEndian: Bool) {
        self.bytes = body
        self.bigEndian = bigEndian
        if body.count >= SharedValues.minimumBodyLength { shared = SharedValues() }
    }

    /// Reads values of `types`, which must fill the body exactly.
    mutating func read(_ types: [DBusType]) throws(Failure) -> [DBusValue] {
        var values: [DBusValue] = []
        values.reserveCapacity(types.count)
        for type in types { values.append(try read(type, depth: 0)) }
        guard offset == bytes.count else { throw .malformed }
        return values
    }

    private mutating func read(_ type: DBusType, depth: Int) throws(Failure) -> DBusValue {
        guard depth <= Self.deepest else { throw .malformed }
        switch type {
        case .byte: return .byte(try byte())
        case .boolean:
            let value: UInt32 = try integer()
            guard value <= 1 else { throw .malformed }
            return .boolean(value == 1)
        case .int16: return .int16(try integer())
        case .uint16: return .uint16(try integer())
        case .int32: return .int32(try integer())
        case .uint32: return .uint32(try integer())
        case .int64: return .int64(try integer())
        case .uint64: return .uint64(try integer())
        case .double: return .double(Double(bitPattern: try integer()))
        case .string: return .string(try string())
        case .objectPath:
            guard let path = ObjectPath(try string()) else { throw .malformed }
            return .objectPath(path)
        case .signature:
            guard let signature = try? DBusSignature(try signatureString()) else { throw .malformed }
            return .signature(signature)
        case .unixFD: throw .fileDescriptor
        case .variant:
            let inner = try variantType()
            guard shared != nil, let key = try sharedKey(of: inner) else {
                return .variant(try read(inner, depth: depth + 1))
            }
            if let variant = shared?.variant(key.key) {
                offset = key.end
                return variant
            }
            let variant = DBusValue.variant(try read(inner, depth: depth + 1))
            shared?.remember(variant, as: key.key)
            return variant
        case .array(let element):
            let end = try arrayEnd(elementAlignment: WireFormat.alignment(of: element))
            let first = elements.count
            defer { elements.removeSubrange(first...) }
            while offset < end {
                let value = try read(element, depth: depth + 1)
                elements.append(value)
            }
            guard offset == end else { throw .malformed }
            return .array(element, Array(elements[first...]))
        case .dictionary(let key, let value):
            let end = try arrayEnd(elementAlignment: 8)
            let first = entries.count
            defer { entries.removeSubrange(first...) }
            while offset < end {
                try align(8)
                let entry = DBusDictEntry(try read(key, depth: depth + 1), try read(value, depth: depth + 1))
                entries.append(entry)
            }
            guard offset == end else { throw .malformed }
            return .dictionary(key: key, value: value, Array(entries[first...]))
        case .structure(let types):
            try align(8)
            var fields: [DBusValue] = []
            fields.reserveCapacity(types.count)
            for type in types { fields.append(try read(type, depth: depth + 1)) }
            return .structure(fields)
        }
    }

    // MARK: Primitives

    private mutating func align(_ alignment: Int) throws(Failure) {
        let aligned = (offset + alignment - 1) & ~(alignment - 1)
        guard aligned <= bytes.count else { throw .malformed }
        offset = aligned
    }

    private mutating func byte() throws(Failure) -> UInt8 {
        guard offset < bytes.count else { throw .malformed }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func integer<T: FixedWidthInteger>() throws(Failure) -> T {
        try align(MemoryLayout<T>.size)
        guard bytes.count - offset >= MemoryLayout<T>.size else { throw .malformed }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// A string or object path: a length, the bytes, a NUL.
    private mutating func string() throws(Failure) -> String {
        let length = Int(try integer() as UInt32)
        guard length < bytes.count - offset, bytes[offset + length] == 0 else { throw .malformed }
        defer { offset += length + 1 }
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        return shared?.string(utf8) ?? String(decoding: utf8, as: UTF8.self)
    }

    /// The key under which a variant holding a value of `type` at the reader's offset is shared, and where that value
    /// ends: for a number, or a string or path of at most 16 bytes. Leaves the offset where the value's wire form
    /// starts (after its alignment), ready to be read.
    private mutating func sharedKey(of type: DBusType) throws(Failure) -> (key: SharedValues.VariantKey, end: Int)? {
        let payload: Int
        let length: Int
        let end: Int
        switch type {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            length = WireFormat.alignment(of: type)
            try align(length)
            payload = offset
            end = payload + length
        case .string, .objectPath:
            try align(4)
            let start = offset
            length = Int(try integer() as UInt32)
            payload = offset
            offset = start
            guard length <= 16 else { return nil }
            end = payload + length + 1
        default:
            return nil
        }
        guard end <= bytes.count else { throw .malformed }
        // A string ends in a NUL, which a repeat's key does not hold.
        if end > payload + length, bytes[end - 1] != 0 { throw .malformed }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { words in
            words.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[payload..<payload + length]))
        }
        let code = type.signature.utf8.first ?? 0
        return (SharedValues.VariantKey(code: code, length: UInt8(length), low: words.0, high: words.1), end)
    }

    /// A signature's bytes: a one-byte length, the bytes, a NUL.
    private mutating func signatureBytes() throws(Failure) -> UnsafeRawBufferPointer {
        let length = Int(try byte())
        guard length < bytes.count - offset, bytes[offset + length] == 0 else { throw .malformed }
        defer { offset += length + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
    }

    private mutating func signatureString() throws(Failure) -> String {
        String(decoding: try signatureBytes(), as: UTF8.self)
    }

    /// A variant's type: one basic type code, read without parsing, as most variants hold one.
    private mutating func variantType() throws(Failure) -> DBusType {
        let signature = try signatureBytes()
        if signature.count == 1, let basic = Self.basicType(signature[0]) { return basic }
        guard let type = try? DBusType(signature: String(decoding: signature, as: UTF8.self)) else {
            throw .malformed
        }
        return type
    }

    private static func basicType(_ code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }

    /// Reads an array's length and the padding before its first element; returns where the array ends.
    private mutating func arrayEnd(elementAlignment: Int) throws(Failure) -> Int {
        let length = Int(try integer() as UInt32)
        try align(elementAlignment)
        guard length <= bytes.count - offset else { throw .malformed }
        return offset + length
    }
}
