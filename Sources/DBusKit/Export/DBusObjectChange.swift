/// One change to the objects a `DBusObjectServer` exports, for ``DBusObjectServer/apply(_:)``, which carries out many
/// in one turn of the server.
public enum DBusObjectChange: Sendable {
    /// `announced`: with an `InterfacesAdded`.
    case export([DBusExportedInterface], at: ObjectPath, announced: Bool)
    case unexport(ObjectPath)
    /// Some properties, by name (``DBusObjectServer/updateProperties(_:interface:at:)``).
    case properties([String: DBusValue], interface: String, at: ObjectPath)
    /// Every property, in the description's order (``DBusObjectServer/updateAllProperties(_:interface:at:)``).
    case allProperties([DBusValue], interface: String, at: ObjectPath)
    case signal(path: ObjectPath, interface: String, member: String, [DBusValue])
}
