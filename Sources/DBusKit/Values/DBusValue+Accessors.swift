/// Convenient construction and extraction of common values.
extension DBusValue {
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .boolean(let v) = self { v } else { nil } }
    public var uint32Value: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    public var int32Value: Int32? { if case .int32(let v) = self { v } else { nil } }
    public var uint64Value: UInt64? { if case .uint64(let v) = self { v } else { nil } }
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var objectPathValue: ObjectPath? { if case .objectPath(let v) = self { v } else { nil } }

    /// The value inside a variant (the value itself otherwise).
    public var unwrapped: DBusValue { if case .variant(let inner) = self { inner.unwrapped } else { self } }

    /// The elements of an array.
    public var arrayValue: [DBusValue]? { if case .array(_, let v) = self { v } else { nil } }

    /// The entries of a dictionary, in wire order and without hashing them: a reply listing ten thousand objects holds
    /// some 200,000.
    public var dictionaryEntries: [DBusDictEntry]? { if case .dictionary(_, _, let v) = self { v } else { nil } }

    /// A string-keyed dictionary, such as `a{sv}`; nil for other types or duplicate keys.
    public var stringDictionary: [String: DBusValue]? {
        guard case .dictionary(.string, _, let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue, result.updateValue(entry.value, forKey: key) == nil else {
                return nil
            }
        }
        return result
    }

    /// `as`
    public static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map(DBusValue.string)) }

    /// `ao`
    public static func objectPaths(_ values: [ObjectPath]) -> DBusValue {
        .array(.objectPath, values.map(DBusValue.objectPath))
    }

    /// `a{sv}` with sorted keys, so the wire order is stable.
    public static func vardict(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            values.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) }
        )
    }

    /// `a{ss}`
    public static func stringDictionary(_ values: [String: String]) -> DBusValue {
        .dictionary(
            key: .string, value: .string,
            values.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .string($0.value)) }
        )
    }
}
