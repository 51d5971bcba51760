/// Conveniences for talking to remote objects.
extension DBusConnection {
    /// Calls a method and returns the reply's values.
    public func call(
        destination: String, path: ObjectPath, interface: String, member: String, _ body: [DBusValue] = [],
        timeout: Duration = defaultTimeout
    ) async throws -> [DBusValue] {
        try await call(
            .methodCall(destination: destination, path: path, interface: interface, member: member, body: body),
            timeout: timeout
        ).body
    }

    /// Reads one property (`org.freedesktop.DBus.Properties.Get`), unwrapped from its variant.
    public func property(destination: String, path: ObjectPath, interface: String, name: String) async throws
        -> DBusValue
    {
        let reply = try await call(
            destination: destination, path: path, interface: Self.propertiesInterface, member: "Get",
            [.string(interface), .string(name)]
        )
        guard let value = reply.first else { throw DBusError.failed("empty reply to Properties.Get") }
        return value.unwrapped
    }

    /// Reads every property of an interface (`GetAll`).
    public func allProperties(destination: String, path: ObjectPath, interface: String) async throws
        -> [String: DBusValue]
    {
        let reply = try await call(
            destination: destination, path: path, interface: Self.propertiesInterface, member: "GetAll",
            [.string(interface)]
        )
        guard let properties = reply.first?.stringDictionary else {
            throw DBusError.failed("unexpected reply to Properties.GetAll")
        }
        return properties.mapValues(\.unwrapped)
    }

    /// Writes one property (`Set`).
    public func setProperty(
        destination: String, path: ObjectPath, interface: String, name: String, value: DBusValue
    ) async throws {
        _ = try await call(
            destination: destination, path: path, interface: Self.propertiesInterface, member: "Set",
            [.string(interface), .string(name), .variant(value)]
        )
    }

    /// The unique names of peers that leave the bus, as they leave.
    public func vanishedPeers() async throws -> AsyncCompactMapSequence<AsyncStream<DBusMessage>, String> {
        try await messages(matching: [.nameOwnerChanged]).compactMap(PeerDeparture.uniqueName(from:))
    }

    static let propertiesInterface = "org.freedesktop.DBus.Properties"
}

/// Reads a `NameOwnerChanged(name, old, new)` signal that says a unique name left the bus.
public enum PeerDeparture {
    public static func uniqueName(from message: DBusMessage) -> String? {
        guard message.member == "NameOwnerChanged", message.body.count == 3,
            let name = message.body[0].stringValue, name.hasPrefix(":"),
            message.body[2].stringValue == ""
        else { return nil }
        return name
    }
}
