import DBusKit

/// Who owns a well-known name, as the bus tells: its `NameOwnerChanged` signals and its answer to `NameHasOwner`.
///
/// The order of the two comes from message serials, which every sender (the bus too) numbers in the order it sends:
/// a signal older than the answer is already contained in it.
enum NameOwner {
    /// The bus's `NameOwnerChanged` signals for `name`.
    static func rule(for name: String) -> MatchRule {
        var rule = MatchRule.nameOwnerChanged
        rule.arg0 = name
        return rule
    }

    /// Whether `name` has an owner, and the serial of the bus's answer.
    static func presence(of name: String, on connection: DBusConnection) async throws -> (owned: Bool, serial: UInt32) {
        let reply = try await connection.call(
            .methodCall(
                destination: bus, path: "/org/freedesktop/DBus", interface: bus, member: "NameHasOwner",
                body: [.string(name)]
            )
        )
        return (reply.body.first?.boolValue == true, reply.serial)
    }

    /// The new owner ("" for none) when `message` is the bus's `NameOwnerChanged` for `name`.
    static func change(of name: String, in message: DBusMessage) -> String? {
        guard message.kind == .signal, message.sender == bus, message.member == "NameOwnerChanged",
            message.body.count == 3, message.body[0].stringValue == name
        else { return nil }
        return message.body[2].stringValue
    }

    /// Whether serial `a` was sent after `b` by the same sender (serials wrap around after 2³² messages).
    static func isAfter(_ a: UInt32, _ b: UInt32) -> Bool {
        Int32(bitPattern: a &- b) > 0
    }

    private static let bus = "org.freedesktop.DBus"
}
