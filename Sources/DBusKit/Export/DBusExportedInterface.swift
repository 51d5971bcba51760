/// A method call as an exported object's handler sees it.
public struct DBusMethodCall: Sendable {
    public let message: DBusMessage

    /// The caller's unique bus name (empty on a peer-to-peer connection).
    public var sender: String { message.sender ?? "" }
    public var path: ObjectPath { message.path ?? .root }
    public var member: String { message.member ?? "" }
    /// The arguments, already checked against the method's declared signature.
    public var arguments: [DBusValue] { message.body }
}

/// One interface of an exported object: its description, its behaviour and its properties' first values.
public struct DBusExportedInterface: Sendable {
    /// Answers a method call with the reply's values, or throws a `DBusError` to answer with an error.
    public typealias MethodHandler = @Sendable (DBusMethodCall) async throws -> [DBusValue]
    /// Validates and applies a write of a read-write property; throwing refuses it. On success the server
    /// stores the value and announces it.
    public typealias PropertySetter = @Sendable (_ name: String, _ value: DBusValue, DBusMethodCall) async throws -> Void

    public let description: DBusInterfaceDescription
    public var methods: [String: MethodHandler]
    public var properties: [String: DBusValue]
    public var setProperty: PropertySetter?
    /// Methods whose calls need not wait for the calls before them, nor hold up those after: the server starts them
    /// and goes on. For calls that wait on something slow (a disk) and whose order with a client's other calls does
    /// not matter, such as those creating a new object.
    public var concurrentMethods: Set<String>
    /// Long methods that let other clients' calls in while they wait, but keep their own client's later calls (and
    /// its departure) waiting until they have answered: for calls that work in batches over many objects, where
    /// what another client asks meanwhile is as if it came between two batches.
    public var interleavedMethods: Set<String>

    public init(
        _ description: DBusInterfaceDescription, methods: [String: MethodHandler] = [:],
        properties: [String: DBusValue] = [:], setProperty: PropertySetter? = nil, concurrentMethods: Set<String> = [],
        interleavedMethods: Set<String> = []
    ) {
        self.description = description
        self.methods = methods
        self.properties = properties
        self.setProperty = setProperty
        self.concurrentMethods = concurrentMethods
        self.interleavedMethods = interleavedMethods
    }

    /// Programming errors in an export: every method handled, every property present and of its type.
    func validate() throws(DBusError) {
        // The object server sends this interface's signals without checking their header again.
        guard DBusNames.isValidInterface(description.name) else {
            throw .invalidArgs("invalid interface name '\(description.name)'")
        }
        for signal in description.signals where !DBusNames.isValidMember(signal.name) {
            throw .invalidArgs("invalid member name '\(signal.name)' in \(description.name)")
        }
        for method in description.methods where methods[method.name] == nil {
            throw .failed("\(description.name).\(method.name) has no handler")
        }
        for name in methods.keys where description.method(name) == nil {
            throw .failed("\(description.name) does not declare a method \(name)")
        }
        for property in description.properties {
            guard let value = properties[property.name], value.type == property.type else {
                throw .failed("\(description.name).\(property.name) needs a first value of type \(property.type.signature)")
            }
        }
    }
}
