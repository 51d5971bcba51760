/// Calls to the message bus itself (`org.freedesktop.DBus`).
extension DBusConnection {
    /// The outcome of `RequestName`.
    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1
        case inQueue = 2
        case exists = 3
        case alreadyOwner = 4
    }

    /// Asks for a well-known name without queueing: another owner makes this answer `.exists`.
    public func requestName(_ name: String, allowReplacement: Bool = false) async throws -> RequestNameReply {
        // DBUS_NAME_FLAG_ALLOW_REPLACEMENT = 1, DBUS_NAME_FLAG_DO_NOT_QUEUE = 4
        let flags: UInt32 = 4 | (allowReplacement ? 1 : 0)
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags)])
        guard let code = reply.first?.uint32Value, let result = RequestNameReply(rawValue: code) else {
            throw DBusError.failed("unexpected reply to RequestName")
        }
        return result
    }

    /// Whether some connection owns `name`.
    public func nameHasOwner(_ name: String) async throws -> Bool {
        try await callBus("NameHasOwner", [.string(name)]).first?.boolValue ?? false
    }

    /// The unique name of the owner of `name`.
    public func nameOwner(_ name: String) async throws -> String {
        guard let owner = try await callBus("GetNameOwner", [.string(name)]).first?.stringValue else {
            throw DBusError.failed("unexpected reply to GetNameOwner")
        }
        return owner
    }

    /// Starts the service that owns `name` through D-Bus activation, if it is not running yet.
    public func startServiceByName(_ name: String) async throws {
        _ = try await callBus("StartServiceByName", [.string(name), .uint32(0)])
    }

    /// The process id of the connection `name` belongs to (`GetConnectionUnixProcessID`).
    public func connectionUnixProcessID(_ name: String) async throws -> UInt32 {
        guard let pid = try await callBus("GetConnectionUnixProcessID", [.string(name)]).first?.uint32Value else {
            throw DBusError.failed("unexpected reply to GetConnectionUnixProcessID")
        }
        return pid
    }

    func callBus(_ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: member, body: body
            )
        ).body
    }
}
