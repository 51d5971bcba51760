/// A D-Bus match rule: which messages a subscription receives.
///
/// Signal rules are registered with the bus (`AddMatch`) and also applied locally, because the bus delivers
/// one copy of a message for all of a connection's rules together.
public struct MatchRule: Hashable, Sendable {
    public var kind: DBusMessage.Kind?
    /// A unique name is compared locally; a well-known name is left to the bus, which resolves it.
    public var sender: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    public var interface: String?
    public var member: String?
    public var arg0: String?

    public init(
        kind: DBusMessage.Kind? = nil, sender: String? = nil, path: ObjectPath? = nil,
        pathNamespace: ObjectPath? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// Every method call addressed to this connection.
    public static let methodCalls = MatchRule(kind: .methodCall)

    /// `NameOwnerChanged` from the bus: peers appearing and vanishing.
    public static let nameOwnerChanged = MatchRule(
        kind: .signal, sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "NameOwnerChanged"
    )

    /// Whether the rule must be sent to the bus: method calls reach their destination without one.
    var needsBusRegistration: Bool { kind != .methodCall }

    /// The rule in the bus's syntax, e.g. `type='signal',interface='org.example.I'`.
    public var busString: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes nothing is special but the quote itself, which is written as '\''.
            parts.append("\(key)='\(value.replacingAll("'", with: "'\\''"))'")
        }
        add("type", kind.map(MatchRule.typeName))
        add("sender", sender)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    public func matches(_ message: DBusMessage) -> Bool {
        if let kind, kind != message.kind { return false }
        if let sender, sender.hasPrefix(":") || sender == "org.freedesktop.DBus", sender != message.sender {
            return false
        }
        if let path, path != message.path { return false }
        if let pathNamespace, !(message.path?.isDescendant(of: pathNamespace) ?? false) { return false }
        if let interface, interface != message.interface { return false }
        if let member, member != message.member { return false }
        if let arg0, arg0 != message.body.first?.stringValue { return false }
        return true
    }

    private static func typeName(_ kind: DBusMessage.Kind) -> String {
        switch kind {
        case .methodCall: "method_call"
        case .methodReturn: "method_return"
        case .error: "error"
        case .signal: "signal"
        }
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
