/// A validated D-Bus object path such as `/org/haul/Haul1/Tasks/7`.
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Fails for anything the D-Bus specification rejects (empty elements, a trailing slash, other characters).
    public init?(_ rawValue: String) {
        guard ObjectPath.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// For literals in code; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        guard let path = ObjectPath(value) else { preconditionFailure("invalid object path literal '\(value)'") }
        self = path
    }

    public static let root: ObjectPath = "/"

    public var description: String { rawValue }

    /// The path one element below this one.
    public func appending(_ element: String) -> ObjectPath? {
        ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// True when `self` is `ancestor` or lies below it. Compares bytes in place: the object server asks it of every
    /// object listed in a `GetManagedObjects` reply.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        guard ancestor.rawValue != "/" else { return true }
        let ancestorLength = ancestor.rawValue.utf8.count
        guard rawValue.utf8.starts(with: ancestor.rawValue.utf8) else { return false }
        return rawValue.utf8.dropFirst(ancestorLength).first.map { $0 == UInt8(ascii: "/") } ?? true
    }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// One pass over the bytes, without a copy: every path of every message received is checked.
    static func isValid(_ path: String) -> Bool {
        let slash = UInt8(ascii: "/")
        var bytes = path.utf8.makeIterator()
        guard bytes.next() == slash else { return false }
        var previous = slash
        while let byte = bytes.next() {
            if byte == slash {
                guard previous != slash else { return false }
            } else if !(DBusNames.isAlpha(byte) || DBusNames.isDigit(byte) || byte == UInt8(ascii: "_")) {
                return false
            }
            previous = byte
        }
        // Only the root ends with a slash.
        return previous != slash || path.utf8.count == 1
    }
}

/// A validated D-Bus signature value (type `g`).
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public let types: [DBusType]

    public init(_ rawValue: String) throws(DBusError) {
        self.types = try DBusType.parse(signature: rawValue)
        self.rawValue = rawValue
    }

    public init(_ types: [DBusType]) {
        self.types = types
        self.rawValue = DBusType.signature(of: types)
    }

    public var description: String { rawValue }
}
