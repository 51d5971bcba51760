#if canImport(Glibc)
import Glibc
#endif

/// Writes a message in the D-Bus wire format (little-endian) in one pass, checking every value against the type it
/// must have.
///
/// libdbus builds a message value by value through its iterators, at several library calls per value, and a reply
/// listing ten thousand tasks holds some 230,000 values. Here the bytes are written directly, and libdbus only
/// validates them when it loads the result (`MessageCodec`).
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    /// Thrown for a file descriptor: only libdbus's iterators can attach one to a message (`IteratorCodec`).
    static let fileDescriptorMet = DBusError.notSupported("a file descriptor is attached by libdbus, not marshalled")

    /// The message's bytes, its body written as `types` (its values' own types when nil), one for each value; its
    /// serial is a placeholder the connection replaces (libdbus requires one to load it).
    static func message(_ message: DBusMessage, as types: [DBusType]? = nil) throws(DBusError) -> [UInt8] {
        let types = types ?? message.body.map(\.type)
        return try Self.message(message, signature: DBusSignature(types)) { writer throws(DBusError) in
            for (value, type) in zip(message.body, types) { try writer.write(value, as: type) }
        }
    }

    /// The bytes of `message`'s header (its body ignored) and of the body `writeBody` writes, which must be of
    /// `signature` (libdbus refuses the message when it loads it otherwise); room for `capacity` bytes is reserved.
    static func message(
        _ message: DBusMessage, signature: DBusSignature, capacity: Int = 0,
        body writeBody: (inout WireWriter) throws(DBusError) -> Void
    ) throws(DBusError) -> [UInt8] {
        guard signature.rawValue.utf8.count <= 255 else {
            throw .invalidArgs("the body's signature is longer than 255 bytes")
        }
        var writer = WireWriter()
        writer.bytes.reserveCapacity(min(max(capacity, 256), WireFormat.maximumMessageLength))
        writer.bytes += [UInt8(ascii: "l"), WireFormat.code(of: message.kind), WireFormat.flags(of: message), 1]
        writer.put(UInt32(0))  // the body's length, set below
        writer.put(UInt32(1))
        try writer.array(elementAlignment: 8) { writer throws(DBusError) in
            if let path = message.path { try writer.field(.path, "o", .objectPath(path)) }
            if let interface = message.interface { try writer.field(.interface, "s", .string(interface)) }
            if let member = message.member { try writer.field(.member, "s", .string(member)) }
            if let errorName = message.errorName { try writer.field(.errorName, "s", .string(errorName)) }
            if message.replySerial != 0 { try writer.field(.replySerial, "u", .uint32(message.replySerial)) }
            if let destination = message.destination { try writer.field(.destination, "s", .string(destination)) }
            if !signature.types.isEmpty { try writer.field(.signature, "g", .signature(signature)) }
        }
        writer.pad(to: 8)
        let bodyStart = writer.bytes.count
        try writeBody(&writer)
        guard writer.bytes.count <= WireFormat.maximumMessageLength else {
            throw .invalidArgs("the message is longer than D-Bus allows")
        }
        writer.set(UInt32(writer.bytes.count - bodyStart), at: 4)
        return writer.bytes
    }

    // MARK: Values

    /// Writes `value`, which must be of `type`; a container's elements are checked against its element types.
    mutating func write(_ value: DBusValue, as type: DBusType) throws(DBusError) {
        switch (value, type) {
        case (.byte(let v), .byte): bytes.append(v)
        case (.boolean(let v), .boolean): put(UInt32(v ? 1 : 0))
        case (.int16(let v), .int16): put(v)
        case (.uint16(let v), .uint16): put(v)
        case (.int32(let v), .int32): put(v)
        case (.uint32(let v), .uint32): put(v)
        case (.int64(let v), .int64): put(v)
        case (.uint64(let v), .uint64): put(v)
        case (.double(let v), .double): put(v.bitPattern)
        case (.string(let v), .string): try putString(v)
        case (.objectPath(let v), .objectPath): try putString(v.rawValue)
        case (.signature(let v), .signature): putSignature(v.rawValue)
        case (.array(let element, let values), .array(let expected)) where element == expected:
            try array(elementAlignment: WireFormat.alignment(of: element)) { writer throws(DBusError) in
                for value in values { try writer.write(value, as: element) }
            }
        case (.dictionary(let key, let valueType, let entries), .dictionary(let expectedKey, let expectedValue))
        where key == expectedKey && valueType == expectedValue:
            guard key.isBasic else { throw .invalidArgs("dictionary key '\(key.signature)' is not basic") }
            try dictionary { writer throws(DBusError) in
                for entry in entries {
                    try writer.entry(entry.key, as: key) { writer throws(DBusError) in
                        try writer.write(entry.value, as: valueType)
                    }
                }
            }
        case (.structure(let fields), .structure(let types)) where fields.count == types.count:
            guard !fields.isEmpty else { throw .invalidArgs("structures need at least one field") }
            pad(to: 8)
            for (field, type) in zip(fields, types) { try write(field, as: type) }
        case (.variant(let inner), .variant):
            try variant(inner)
        case (.unixFD, .unixFD):
            throw Self.fileDescriptorMet
        default:
            throw .invalidArgs("a '\(value.type.signature)' where a '\(type.signature)' belongs")
        }
    }

    /// A dictionary (`a{…}`) whose entries `writeEntries` writes, each with ``entry(_:as:_:)``.
    mutating func dictionary(_ writeEntries: (inout WireWriter) throws(DBusError) -> Void) throws(DBusError) {
        try array(elementAlignment: 8, writeEntries)
    }

    /// One entry of a dictionary: its basic key, of `keyType`, and the value `writeValue` writes.
    mutating func entry(
        _ key: DBusValue, as keyType: DBusType, _ writeValue: (inout WireWriter) throws(DBusError) -> Void
    ) throws(DBusError) {
        pad(to: 8)
        try write(key, as: keyType)
        try writeValue(&self)
    }

    /// A variant holding `inner`. A number or a string, what nearly every property holds, is written without working
    /// out its type and signature as values first: through `write(_:as:)`, hauld spent 8 % more CPU on a
    /// `GetManagedObjects` of 10,000 tasks (98–102 ms against 90–94 ms in alternating runs).
    mutating func variant(_ inner: DBusValue) throws(DBusError) {
        switch inner {
        case .boolean(let v): basicSignature("b"); put(UInt32(v ? 1 : 0))
        case .int32(let v): basicSignature("i"); put(v)
        case .uint32(let v): basicSignature("u"); put(v)
        case .int64(let v): basicSignature("x"); put(v)
        case .uint64(let v): basicSignature("t"); put(v)
        case .double(let v): basicSignature("d"); put(v.bitPattern)
        case .string(let v): basicSignature("s"); try putString(v)
        default:
            let innerType = inner.type
            putSignature(innerType.signature)
            try write(inner, as: innerType)
        }
    }

    /// One entry of a dictionary with string keys (`a{s…}`), its value written by `writeValue`.
    mutating func entry(
        _ key: String, _ writeValue: (inout WireWriter) throws(DBusError) -> Void
    ) throws(DBusError) {
        pad(to: 8)
        try putString(key)
        try writeValue(&self)
    }

    // MARK: Primitives

    private mutating func pad(to alignment: Int) {
        let padding = (alignment - bytes.count & (alignment - 1)) & (alignment - 1)
        for _ in 0..<padding { bytes.append(0) }
    }

    private mutating func put<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func set(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { source in
            for index in 0..<4 { bytes[offset + index] = source[index] }
        }
    }

    /// A string or object path: its length, its bytes, a NUL.
    private mutating func putString(_ string: String) throws(DBusError) {
        let length = string.utf8.count
        guard length <= WireFormat.maximumArrayLength else { throw .invalidArgs("a string is longer than D-Bus allows") }
        put(UInt32(length))
        let appended = string.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard let base = utf8.baseAddress else { return true }
            guard memchr(base, 0, utf8.count) == nil else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        switch appended {
        case true?: break
        case false?: throw .invalidArgs("strings cannot contain NUL bytes")
        case nil:
            guard !string.utf8.contains(0) else { throw .invalidArgs("strings cannot contain NUL bytes") }
            bytes.append(contentsOf: string.utf8)
        }
        bytes.append(0)
    }

    /// The signature of a basic type, one code long.
    private mutating func basicSignature(_ code: Unicode.Scalar) {
        bytes.append(1)
        bytes.append(UInt8(ascii: code))
        bytes.append(0)
    }

    /// A signature (already valid, so at most 255 bytes): its length in one byte, its bytes, a NUL.
    private mutating func putSignature(_ signature: String) {
        bytes.append(UInt8(truncatingIfNeeded: signature.utf8.count))
        bytes.append(contentsOf: signature.utf8)
        bytes.append(0)
    }

    /// An array: its length in bytes (which leaves out the padding before the first element), then the elements.
    private mutating func array(
        elementAlignment: Int, _ elements: (inout WireWriter) throws(DBusError) -> Void
    ) throws(DBusError) {
        put(UInt32(0))
        let lengthOffset = bytes.count - 4
        pad(to: elementAlignment)
        let start = bytes.count
        try elements(&self)
        let length = bytes.count - start
        guard length <= WireFormat.maximumArrayLength else { throw .invalidArgs("an array is longer than D-Bus allows") }
        set(UInt32(length), at: lengthOffset)
    }

    /// A header field: `(yv)`, a code and a variant of a basic type.
    private mutating func field(_ code: WireFormat.Field, _ type: Character, _ value: DBusValue) throws(DBusError) {
        pad(to: 8)
        bytes.append(code.rawValue)
        putSignature(String(type))
        try write(value, as: value.type)
    }
}
