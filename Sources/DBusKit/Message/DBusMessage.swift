/// A D-Bus message as plain Swift data: decoded from libdbus on the connection's thread and never sharing
/// libdbus memory, so it can be passed freely between tasks.
public struct DBusMessage: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var serial: UInt32 = 0
    public var replySerial: UInt32 = 0
    public var sender: String?
    public var destination: String?
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var noReplyExpected = false
    public var body: [DBusValue]

    /// The body's signature.
    public var signature: String { DBusType.signature(of: body.map(\.type)) }

    public init(kind: Kind, body: [DBusValue] = []) {
        self.kind = kind
        self.body = body
    }

    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall, body: body)
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        return message
    }

    public static func signal(
        path: ObjectPath, interface: String, member: String, body: [DBusValue] = [], destination: String? = nil
    ) -> DBusMessage {
        var message = DBusMessage(kind: .signal, body: body)
        message.path = path
        message.interface = interface
        message.member = member
        message.destination = destination
        return message
    }

    /// The successful reply to this method call.
    public func makeReturn(_ body: [DBusValue] = []) -> DBusMessage {
        var reply = DBusMessage(kind: .methodReturn, body: body)
        reply.replySerial = serial
        reply.destination = sender
        return reply
    }

    /// The error reply to this method call.
    public func makeError(_ error: DBusError) -> DBusMessage {
        var reply = DBusMessage(kind: .error, body: error.message.isEmpty ? [] : [.string(error.message)])
        reply.replySerial = serial
        reply.destination = sender
        reply.errorName = error.name
        return reply
    }

    /// For an error reply: the error it carries.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        return DBusError(name: errorName ?? DBusError.failedName, message: body.first?.stringValue ?? "")
    }
}
