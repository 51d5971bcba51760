/// A single complete D-Bus type, parsed from a signature.
///
/// Arrays and dictionaries carry their element types, so an empty `as` and an empty `ai` stay distinct.
public indirect enum DBusType: Hashable, Sendable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    case array(DBusType)
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The type's signature, e.g. `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// Basic types are the only ones allowed as dictionary keys.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// Parses exactly one complete type.
    public init(signature: String) throws(DBusError) {
        let types = try DBusType.parse(signature: signature)
        guard types.count == 1 else {
            throw .invalidArgs("'\(signature)' is not a single complete type")
        }
        self = types[0]
    }

    /// Parses a signature (a sequence of complete types), enforcing the limits of the D-Bus specification.
    public static func parse(signature: String) throws(DBusError) -> [DBusType] {
        var parser = SignatureParser(Array(signature.utf8))
        guard parser.bytes.count <= 255 else {
            throw .invalidArgs("signature is longer than 255 bytes")
        }
        var types: [DBusType] = []
        while !parser.atEnd {
            types.append(try parser.parseType(arrayDepth: 0, structDepth: 0))
        }
        return types
    }

    /// The concatenated signature of a sequence of types.
    public static func signature(of types: [DBusType]) -> String {
        types.map(\.signature).joined()
    }
}

private struct SignatureParser {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }

    mutating func next() throws(DBusError) -> UInt8 {
        guard index < bytes.count else { throw .invalidArgs("signature ends inside a type") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func parseType(arrayDepth: Int, structDepth: Int) throws(DBusError) -> DBusType {
        guard arrayDepth <= 32, structDepth <= 32 else {
            throw .invalidArgs("signature nests containers deeper than 32")
        }
        let code = try next()
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try parseType(arrayDepth: arrayDepth + 1, structDepth: structDepth)
                guard key.isBasic else { throw .invalidArgs("dictionary key must be a basic type") }
                let value = try parseType(arrayDepth: arrayDepth + 1, structDepth: structDepth)
                guard try next() == UInt8(ascii: "}") else {
                    throw .invalidArgs("dictionary entry must hold exactly two types")
                }
                return .dictionary(key: key, value: value)
            }
            return .array(try parseType(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            var fields: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                fields.append(try parseType(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard try next() == UInt8(ascii: ")"), !fields.isEmpty else {
                throw .invalidArgs("structure must be closed and hold at least one type")
            }
            return .structure(fields)
        default:
            throw .invalidArgs("invalid type code '\(Character(Unicode.Scalar(code)))' in signature")
        }
    }
}
