/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.InvalidArgs` and a human-readable message.
///
/// Thrown by calls that receive an error reply, and by exported method handlers to answer with one.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let message: String

    /// An error name that is not valid becomes `org.freedesktop.DBus.Error.Failed`, since libdbus refuses to send it.
    public init(name: String, message: String) {
        if DBusNames.isValidErrorName(name) {
            self.name = name
            self.message = message
        } else {
            self.name = DBusError.failedName
            self.message = "\(name): \(message)"
        }
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    static let failedName = "org.freedesktop.DBus.Error.Failed"

    public static func failed(_ message: String) -> DBusError { DBusError(name: failedName, message: message) }
    public static func invalidArgs(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    public static func unknownMethod(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }
    public static func unknownObject(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: message)
    }
    public static func unknownInterface(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownInterface", message: message)
    }
    public static func unknownProperty(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }
    public static func propertyReadOnly(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: message)
    }
    public static func notSupported(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }
    public static func disconnected(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.Disconnected", message: message)
    }
    public static func noReply(_ message: String) -> DBusError {
        DBusError(name: "org.freedesktop.DBus.Error.NoReply", message: message)
    }
}
