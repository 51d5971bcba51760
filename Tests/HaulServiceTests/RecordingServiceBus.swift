// @testable for what the object server itself uses: `DBusMethodCall(message:)`, the standard interfaces every
// object has, and an export's own checks (`validate()`), so that the fake cannot drift from them.
@testable import DBusKit
import Synchronization
@testable import HaulService

/// hauld's services on a bus in-process, without a `dbus-daemon`: the object table `DBusObjectServer` keeps (each
/// path's interfaces and their properties' current values), a client's calls answered by calling the exported
/// method handlers and property setters directly, and every signal the server would send (`PropertiesChanged`,
/// `InterfacesAdded`, `InterfacesRemoved`, the interfaces' own) handed out in order through `signals`, as the
/// `DBusMessage` a client receives.
///
/// It checks what the server checks, with the same error names: an exported object and interface, a declared method
/// called with its signature, a declared property, read-write and of its type for a `Set`; a declared signal of its
/// signature. A handler's error that is no `DBusError` answers `Failed`, as on the bus. Unlike the server, it does
/// not hold a call until the one before it has answered: a test makes its calls one at a time. Each of the services'
/// requests suspends first, as the hop to the server's actor does, so that what may run in that window on the bus
/// runs here too.
final class RecordingServiceBus: ServiceBus {
    /// The sender of every signal: the services' connection.
    static let uniqueName = ":1.1"
    /// The unique name every call comes from, as a handler sees it.
    static let caller = ":1.2"

    /// Every exported object: its interfaces, each with its properties' current values.
    private let objects = Mutex<[ObjectPath: [String: DBusExportedInterface]]>([:])
    private let objectManager: ObjectPath
    /// Every signal, in the order the services sent it.
    let signals: AsyncStream<DBusMessage>
    private let signalInput: AsyncStream<DBusMessage>.Continuation
    /// How many signals were sent so far, and each wait of `written(through:)`: its mark, and how many had been sent.
    private let counts = Mutex((sent: 0, waits: [(mark: Int, sent: Int)]()))

    /// `objectManager` announces the objects below it, as `DBusObjectServer.addObjectManager(at:)` does.
    init(objectManager: ObjectPath) {
        self.objectManager = objectManager
        (signals, signalInput) = AsyncStream.makeStream(of: DBusMessage.self)
    }

    // MARK: ServiceBus

    /// A mark counts signals: how many were sent before it.
    func writeMark() async -> DBusConnection.WriteMark {
        await Task.yield()
        return DBusConnection.WriteMark(bytes: UInt64(sentCount))
    }

    /// Every signal is in `signals` as soon as it is sent; the wait is noted (`writtenWaits`).
    func written(through mark: DBusConnection.WriteMark) async {
        await Task.yield()
        counts.withLock { $0.waits.append((Int(mark.bytes), $0.sent)) }
    }

    /// Each `written(through:)` in order: how many signals were sent before its mark, and how many by the wait.
    var writtenWaits: [(mark: Int, sent: Int)] { counts.withLock { $0.waits } }

    /// How many signals were sent so far.
    var sentCount: Int { counts.withLock { $0.sent } }

    func export(_ interfaces: [DBusExportedInterface], at path: ObjectPath, announced: Bool) async throws {
        await Task.yield()
        try objects.withLock { objects in
            for interface in interfaces {
                try interface.validate()
                guard objects[path]?[interface.description.name] == nil else {
                    throw DBusError.failed("\(interface.description.name) is already exported at \(path)")
                }
            }
            for interface in interfaces {
                var exported = interface
                // Only the declared properties, as the server keeps them.
                exported.properties = exported.properties.filter { interface.description.property($0.key) != nil }
                objects[path, default: [:]][interface.description.name] = exported
            }
            guard announced, isManaged(path) else { return }
            let entries = interfaces.map(\.description.name).sorted().map { name in
                DBusDictEntry(.string(name), .vardict(objects[path]?[name]?.properties ?? [:]))
            }
            let added = DBusValue.dictionary(key: .string, value: .dictionary(key: .string, value: .variant), entries)
            try emit(
                path: objectManager, interface: StandardInterfaces.objectManager.name, member: "InterfacesAdded",
                [.objectPath(path), added], in: objects
            )
        }
    }

    func unexport(_ path: ObjectPath) async throws {
        await Task.yield()
        try objects.withLock { objects in
            guard let removed = objects.removeValue(forKey: path), isManaged(path) else { return }
            try emit(
                path: objectManager, interface: StandardInterfaces.objectManager.name, member: "InterfacesRemoved",
                [.objectPath(path), .strings(removed.keys.sorted())],
                in: objects
            )
        }
    }

    func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws {
        await Task.yield()
        try objects.withLock { objects in
            guard var exported = objects[path]?[interface] else {
                throw DBusError.failed("\(interface) is not exported at \(path)")
            }
            var changed: [String: DBusValue] = [:]
            for (name, value) in changes {
                guard exported.description.property(name)?.type == value.type else {
                    throw DBusError.failed("\(interface).\(name) is not a property of type \(value.type.signature)")
                }
                if exported.properties[name] != value {
                    exported.properties[name] = value
                    changed[name] = value
                }
            }
            guard !changed.isEmpty else { return }
            objects[path]?[interface] = exported
            try emit(
                path: path, interface: StandardInterfaces.properties.name, member: "PropertiesChanged",
                [.string(interface), .vardict(changed), .strings([])], in: objects
            )
        }
    }

    /// `.allProperties`: the values in the description's order, stored by name.
    private func updateAllProperties(_ values: [DBusValue], interface: String, at path: ObjectPath) async throws {
        let names = objects.withLock { $0[path]?[interface]?.description.properties.map(\.name) }
        guard let names, names.count == values.count else {
            throw DBusError.failed("\(interface) at \(path) does not have \(values.count) properties")
        }
        try await updateProperties(
            Dictionary(uniqueKeysWithValues: zip(names, values)), interface: interface, at: path
        )
    }

    func apply(_ changes: [DBusObjectChange]) async -> [(index: Int, error: any Error)] {
        var failures: [(index: Int, error: any Error)] = []
        for (index, change) in changes.enumerated() {
            do {
                switch change {
                case .export(let interfaces, let path, let announced):
                    try await export(interfaces, at: path, announced: announced)
                case .unexport(let path):
                    try await unexport(path)
                case .properties(let properties, let interface, let path):
                    try await updateProperties(properties, interface: interface, at: path)
                case .allProperties(let values, let interface, let path):
                    try await updateAllProperties(values, interface: interface, at: path)
                case .signal(let path, let interface, let member, let body):
                    try await emitSignal(path: path, interface: interface, member: member, body)
                }
            } catch {
                failures.append((index, error))
            }
        }
        return failures
    }

    func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws {
        await Task.yield()
        try objects.withLock { try emit(path: path, interface: interface, member: member, body, in: $0) }
    }

    /// Checks a signal as the server does and hands it out; called under the lock, so that signals leave in the
    /// order of the changes they announce.
    private func emit(
        path: ObjectPath, interface: String, member: String, _ body: [DBusValue],
        in objects: [ObjectPath: [String: DBusExportedInterface]]
    ) throws {
        let description = objects[path]?[interface]?.description
            ?? StandardInterfaces.named(interface)
        guard let signal = description?.signal(member) else {
            throw DBusError.failed("\(interface).\(member) is not a signal of \(path)")
        }
        var message = DBusMessage.signal(path: path, interface: interface, member: member, body: body)
        guard message.signature == signal.signature else {
            throw DBusError.failed("\(interface).\(member) takes '\(signal.signature)', not '\(message.signature)'")
        }
        message.sender = Self.uniqueName
        counts.withLock { $0.sent += 1 }
        signalInput.yield(message)
    }

    /// Whether `objectManager` announces the object at `path`: it lies strictly below.
    private func isManaged(_ path: ObjectPath) -> Bool {
        path != objectManager && path.isDescendant(of: objectManager)
    }

    // MARK: What a client calls

    /// Calls a method, as `DBusConnection.call(destination:path:interface:member:_:)` does, and returns the reply.
    func call(path: ObjectPath, interface: String, member: String, _ body: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        let exported = try self.interface(interface, at: path)
        guard let method = exported.description.method(member), let handler = exported.methods[member] else {
            throw DBusError.unknownMethod("\(interface) has no method \(member)")
        }
        let message = Self.call(path: path, interface: interface, member: member, body)
        guard message.signature == method.inputSignature else {
            throw DBusError.invalidArgs(
                "\(interface).\(member) takes '\(method.inputSignature)', not '\(message.signature)'"
            )
        }
        return try await Self.answering { try await handler(DBusMethodCall(message: message)) }
    }

    /// Reads a property, as `DBusConnection.property(destination:path:interface:name:)` does (unwrapped).
    func property(path: ObjectPath, interface: String, name: String) throws -> DBusValue {
        guard let value = try self.interface(interface, at: path).properties[name] else {
            throw DBusError.unknownProperty("\(interface) has no property \(name)")
        }
        return DBusValue.variant(value).unwrapped
    }

    /// Writes a property, as `DBusConnection.setProperty(destination:path:interface:name:value:)` does: the setter
    /// decides, then the value is stored and announced.
    func setProperty(path: ObjectPath, interface: String, name: String, value: DBusValue) async throws {
        let exported = try self.interface(interface, at: path)
        guard let property = exported.description.property(name) else {
            throw DBusError.unknownProperty("\(interface) has no property \(name)")
        }
        guard property.access == .readwrite else {
            throw DBusError.propertyReadOnly("\(interface).\(name) is read-only")
        }
        guard value.type == property.type else {
            throw DBusError.invalidArgs(
                "\(interface).\(name) is of type '\(property.type.signature)', not '\(value.type.signature)'"
            )
        }
        let message = Self.call(
            path: path, interface: StandardInterfaces.properties.name, member: "Set",
            [.string(interface), .string(name), .variant(value)]
        )
        try await Self.answering {
            try await exported.setProperty?(name, value, DBusMethodCall(message: message))
            try await updateProperties([name: value], interface: interface, at: path)
        }
    }

    private func interface(_ name: String, at path: ObjectPath) throws -> DBusExportedInterface {
        try objects.withLock { objects in
            guard let interfaces = objects[path] else { throw DBusError.unknownObject("no object at \(path)") }
            guard let exported = interfaces[name] else {
                throw DBusError.unknownInterface("\(path) has no interface \(name)")
            }
            return exported
        }
    }

    private static func call(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) -> DBusMessage {
        var message = DBusMessage.methodCall(
            destination: uniqueName, path: path, interface: interface, member: member, body: body
        )
        message.sender = caller
        return message
    }

    /// A handler's failure as the caller receives it: a `DBusError` as thrown, anything else `Failed`.
    private static func answering<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError.failed(String(describing: error))
        }
    }
}
