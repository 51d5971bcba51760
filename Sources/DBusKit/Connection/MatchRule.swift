/// A D-Bus match rule: which messages a subscription receives.
///
/// Signal rules are registered with the bus (`AddMatch`) and also applied locally, because the bus delivers
/// one copy of a message for all of a connection's rules together.
public struct MatchRule: Hashable, Sendable {
    public var kind: DBusMessage.Kind?
    /// A unique name is compared as it is; a well-known name with its current owner, which the connection follows.
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

    /// The sender when it is a well-known name, which only its current owner can match.
    var wellKnownSender: String? {
        guard let sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" else { return nil }
        return sender
    }

    /// `matches(_:)`, with a well-known sender compared with its owner (`ownerOf` answers nil when unknown).
    ///
    /// Without this, a subscription to signals from `org.example.Service` would also receive those of any other
    /// peer that another subscription of the same connection lets through (a spoofing hole).
    func matches(_ message: DBusMessage, ownerOf: (String) -> String?) -> Bool {
        if let name = wellKnownSender {
            guard let owner = ownerOf(name), owner == message.sender else { return false }
        }
        return matches(message)
    }

    /// Whether `message` matches, leaving out a well-known sender, which only the connection can resolve.
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
