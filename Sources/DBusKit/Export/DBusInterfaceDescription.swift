/// The Swift description of a D-Bus interface: what is dispatched, checked and introspected.
public struct DBusInterfaceDescription: Sendable, Equatable {
    public struct Argument: Sendable, Equatable {
        public var name: String
        public var type: DBusType

        public init(_ name: String, _ type: DBusType) {
            self.name = name
            self.type = type
        }
    }

    public struct Method: Sendable, Equatable {
        public var name: String
        public var inputs: [Argument]
        public var outputs: [Argument]

        public init(_ name: String, inputs: [Argument] = [], outputs: [Argument] = []) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
        }

        public var inputSignature: String { DBusType.signature(of: inputs.map(\.type)) }
        public var outputSignature: String { DBusType.signature(of: outputs.map(\.type)) }
    }

    public struct Signal: Sendable, Equatable {
        public var name: String
        public var arguments: [Argument]

        public init(_ name: String, _ arguments: [Argument] = []) {
            self.name = name
            self.arguments = arguments
        }

        public var signature: String { DBusType.signature(of: arguments.map(\.type)) }
    }

    public struct Property: Sendable, Equatable {
        public enum Access: String, Sendable { case read, readwrite }

        public var name: String
        public var type: DBusType
        public var access: Access

        public init(_ name: String, _ type: DBusType, access: Access = .read) {
            self.name = name
            self.type = type
            self.access = access
        }
    }

    public var name: String
    public var methods: [Method]
    public var signals: [Signal]
    public var properties: [Property]

    public init(name: String, methods: [Method] = [], signals: [Signal] = [], properties: [Property] = []) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }

    public func method(_ name: String) -> Method? { methods.first { $0.name == name } }
    public func signal(_ name: String) -> Signal? { signals.first { $0.name == name } }
    public func property(_ name: String) -> Property? { properties.first { $0.name == name } }
}

/// The interfaces every exported object has, implemented by `DBusObjectServer` itself.
public enum StandardInterfaces {
    public static let peer = DBusInterfaceDescription(
        name: "org.freedesktop.DBus.Peer",
        methods: [.init("Ping"), .init("GetMachineId", outputs: [.init("machine_uuid", .string)])]
    )

    public static let introspectable = DBusInterfaceDescription(
        name: "org.freedesktop.DBus.Introspectable",
        methods: [.init("Introspect", outputs: [.init("xml_data", .string)])]
    )

    public static let properties = DBusInterfaceDescription(
        name: "org.freedesktop.DBus.Properties",
        methods: [
            .init(
                "Get", inputs: [.init("interface_name", .string), .init("property_name", .string)],
                outputs: [.init("value", .variant)]
            ),
            .init(
                "GetAll", inputs: [.init("interface_name", .string)],
                outputs: [.init("props", .dictionary(key: .string, value: .variant))]
            ),
            .init(
                "Set",
                inputs: [.init("interface_name", .string), .init("property_name", .string), .init("value", .variant)]
            ),
        ],
        signals: [
            .init(
                "PropertiesChanged",
                [
                    .init("interface_name", .string),
                    .init("changed_properties", .dictionary(key: .string, value: .variant)),
                    .init("invalidated_properties", .array(.string)),
                ]
            )
        ]
    )

    public static let objectManager = DBusInterfaceDescription(
        name: "org.freedesktop.DBus.ObjectManager",
        methods: [
            .init("GetManagedObjects", outputs: [.init("object_paths_interfaces_and_properties", managedObjectsType)])
        ],
        signals: [
            .init(
                "InterfacesAdded",
                [.init("object_path", .objectPath), .init("interfaces_and_properties", interfacesAndProperties)]
            ),
            .init("InterfacesRemoved", [.init("object_path", .objectPath), .init("interfaces", .array(.string))]),
        ]
    )

    /// `a{sa{sv}}`
    static let interfacesAndProperties = DBusType.dictionary(
        key: .string, value: .dictionary(key: .string, value: .variant)
    )
    /// `a{oa{sa{sv}}}`
    static let managedObjectsType = DBusType.dictionary(key: .objectPath, value: interfacesAndProperties)

    /// Standard interfaces on every object, in introspection order.
    static let common = [peer, introspectable, properties]

    /// The standard interface called `name`, the object manager's included: the signals of these any object may emit.
    static func named(_ name: String) -> DBusInterfaceDescription? {
        (common + [objectManager]).first { $0.name == name }
    }
}
