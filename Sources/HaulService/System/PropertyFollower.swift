import DBusKit

/// Follows the properties of one interface of an object that a well-known name owns: the name coming and going,
/// every value when it comes (`GetAll`), and each `PropertiesChanged` after that.
///
/// What the service sends is data, never trusted to be well formed: a signal of another shape is ignored, a `GetAll`
/// that fails or answers something else leaves the service present without properties, a service that dies
/// mid-call is only absent. Nothing it sends can trap.
///
/// The order of events is taken from message serials (see `NameOwner`): a `PropertiesChanged` older than the `GetAll`
/// answer from the same owner is already contained in that answer and is skipped, so that no stale value is ever
/// reported, not even for a moment.
struct PropertyFollower: Sendable {
    let connection: DBusConnection
    let name: String
    let path: ObjectPath
    let interface: String
    /// How long `GetAll` may take before the service counts as present without properties.
    var timeout: Duration = .seconds(10)

    /// What is known of the current owner.
    private struct Snapshot {
        /// The owner's unique name; nil when `GetAll` failed before saying it (then any owner's signal counts).
        var owner: String?
        /// The serial of the `GetAll` answer; nil when it failed (then every later signal counts).
        var serial: UInt32?
        var properties: [String: DBusValue]
    }

    /// Calls `update` with the properties — nil while nobody owns the name — first with what it finds at the
    /// start, then after every change, until the task is cancelled or the connection closes. Throws only when it
    /// cannot start following (the connection is closed).
    func run(_ update: (_ properties: [String: DBusValue]?) async -> Void) async throws {
        let changesRule = MatchRule(
            kind: .signal, sender: name, path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
            arg0: interface
        )
        let messages = try await connection.messages(matching: [NameOwner.rule(for: name), changesRule])
        let presence = try await NameOwner.presence(of: name, on: connection)
        var ownerSerial = presence.serial
        var snapshot = presence.owned ? await properties(of: name) : nil
        await update(snapshot?.properties)

        for await message in messages {
            if let owner = NameOwner.change(of: name, in: message) {
                guard NameOwner.isAfter(message.serial, ownerSerial) else { continue }
                ownerSerial = message.serial
                // Asked of the unique name: the answer comes from this owner or not at all.
                snapshot = owner.isEmpty ? nil : await properties(of: owner)
                await update(snapshot?.properties)
            } else if var current = snapshot, let change = PropertiesChange(message, interface: interface),
                current.owner == nil || current.owner == message.sender,
                current.serial.map({ NameOwner.isAfter(message.serial, $0) }) ?? true
            {
                if change.invalidated.isEmpty {
                    current.properties.merge(change.changed) { $1 }
                    snapshot = current
                } else if let sender = message.sender {
                    // Invalidated properties say only that their values are gone: ask for them all again.
                    snapshot = await properties(of: sender)
                } else {
                    continue
                }
                await update(snapshot?.properties)
            }
        }
    }

    /// `GetAll` of `destination`; no properties when it fails or answers with anything but `a{sv}`.
    private func properties(of destination: String) async -> Snapshot {
        let call = DBusMessage.methodCall(
            destination: destination, path: path, interface: Self.propertiesInterface, member: "GetAll",
            body: [.string(interface)]
        )
        guard let reply = try? await connection.call(call, timeout: timeout) else {
            return Snapshot(owner: destination.hasPrefix(":") ? destination : nil, serial: nil, properties: [:])
        }
        guard let properties = reply.body.first?.stringDictionary else {
            // An answer that says nothing contains no signal either: every signal counts.
            return Snapshot(owner: reply.sender, serial: nil, properties: [:])
        }
        return Snapshot(owner: reply.sender, serial: reply.serial, properties: properties.mapValues(\.unwrapped))
    }

    static let propertiesInterface = "org.freedesktop.DBus.Properties"
}

/// A `PropertiesChanged(s interface, a{sv} changed, as invalidated)` signal for one interface, if well formed.
struct PropertiesChange {
    let changed: [String: DBusValue]
    let invalidated: [String]

    init?(_ message: DBusMessage, interface: String) {
        guard message.kind == .signal, message.interface == PropertyFollower.propertiesInterface,
            message.member == "PropertiesChanged", message.body.count == 3,
            message.body[0].stringValue == interface,
            let changed = message.body[1].stringDictionary,
            case .array(.string, let invalidated) = message.body[2]
        else { return nil }
        self.changed = changed.mapValues(\.unwrapped)
        self.invalidated = invalidated.compactMap(\.stringValue)
    }
}
