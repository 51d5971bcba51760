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

    /// True when `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        ancestor.rawValue == "/" || rawValue == ancestor.rawValue || rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    static func isValid(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        let elements = bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return elements.allSatisfy { element in
            !element.isEmpty
                && element.allSatisfy { DBusNames.isAlpha($0) || DBusNames.isDigit($0) || $0 == UInt8(ascii: "_") }
        }
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
