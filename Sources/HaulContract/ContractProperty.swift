public import DBusKit

/// A property of one of the contract's interfaces: its name (the raw value), its D-Bus type and whether clients may
/// write it.
///
/// Public, as ``Swift/Dictionary/byName`` is, only for ``values(_:)``'s sake: Swift 6.3 serializes the body of an
/// inlinable `package` declaration for no other module, so that its callers ran it generic.
public protocol ContractProperty: RawRepresentable<String>, CaseIterable, Hashable, Sendable {
    var type: DBusType { get }
    var isWritable: Bool { get }
}

extension ContractProperty {
    package var name: String { rawValue }

    package var declaration: DBusInterfaceDescription.Property {
        .init(rawValue, type, access: isWritable ? .readwrite : .read)
    }

    /// Property values keyed by name, as exported interfaces and `PropertiesChanged` carry them.
    @inlinable
    public static func values(_ values: [Self: DBusValue]) -> [String: DBusValue] { values.byName }

    /// The property's value in a `GetAll` reply or the dictionary of an `InterfacesAdded` or `PropertiesChanged`,
    /// without its variant; nil when it is missing or not of the contract's type.
    package func value(in properties: [String: DBusValue]) -> DBusValue? {
        guard let value = properties[rawValue]?.unwrapped, value.type == type else { return nil }
        return value
    }
}

extension Dictionary where Key: RawRepresentable, Key.RawValue == String {
    /// The dictionary keyed by the names the bus uses: the properties or method handlers of an exported interface,
    /// the changes of a `PropertiesChanged`, the entries of an options `a{sv}`.
    ///
    /// Inlinable, so that each caller gets it specialized: unspecialized, its generic tuples and dictionaries were
    /// looked up in the runtime's metadata caches at every call (a fifth of a `SuspendAll`'s time). Public, not
    /// package: Swift 6.3 serializes the body of an inlinable `package` declaration for no other module.
    @inlinable
    public var byName: [String: Value] {
        var named = [String: Value](minimumCapacity: count)
        for (key, value) in self { named[key.rawValue] = value }
        return named
    }
}
