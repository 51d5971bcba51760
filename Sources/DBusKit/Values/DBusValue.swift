/// A typed D-Bus value.
///
/// Containers carry their element types so that empty arrays and dictionaries keep their signature. Only the cases
/// that need it are boxed: a number or a string is stored inline, as a reply of ten thousand objects holds hundreds of
/// thousands of them.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    indirect case signature(DBusSignature)
    case unixFD(DBusFileDescriptor)
    /// An array whose elements all have the given type.
    indirect case array(DBusType, [DBusValue])
    /// A dictionary (`a{kv}`), kept in wire order.
    indirect case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
    indirect case structure([DBusValue])
    indirect case variant(DBusValue)

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// Checks what libdbus would otherwise abort on: elements that do not match their container's type,
    /// strings with NUL bytes, empty structures, non-basic dictionary keys.
    public func validate() throws(DBusError) {
        switch self {
        case .string(let string):
            guard !string.utf8.contains(0) else { throw .invalidArgs("strings cannot contain NUL bytes") }
        case .array(let element, let values):
            for value in values {
                guard value.type == element else {
                    throw .invalidArgs("array of '\(element.signature)' holds a '\(value.type.signature)'")
                }
                try value.validate()
            }
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic else { throw .invalidArgs("dictionary key '\(key.signature)' is not basic") }
            for entry in entries {
                guard entry.key.type == key, entry.value.type == valueType else {
                    throw .invalidArgs("dictionary a{\(key.signature)\(valueType.signature)} holds a wrong entry")
                }
                try entry.key.validate()
                try entry.value.validate()
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("structures need at least one field") }
            for field in fields { try field.validate() }
        case .variant(let inner):
            try inner.validate()
        default:
            return
        }
    }
}

/// One entry of a D-Bus dictionary.
public struct DBusDictEntry: Hashable, Sendable {
    public var key: DBusValue
    public var value: DBusValue

    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}
