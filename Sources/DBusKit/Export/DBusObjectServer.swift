/// Exports objects on a connection: dispatches method calls, implements `Properties`, `Introspectable`
/// and `ObjectManager`, and emits signals.
///
/// Method calls are handled one at a time in arrival order, together with peer departures, so that a
/// client's calls and its disappearance are seen in the order the bus sent them. Two kinds of method are let off
/// that line: an interface's `concurrentMethods` are started and left to finish while the next calls are handled,
/// and its `interleavedMethods` are too, but the same client's later calls and its departure wait until one has
/// answered (``CallOrder``). Every call is answered:
/// unknown objects, interfaces, members and wrong signatures get the standard error names, and a handler's
/// failure becomes an error reply, never a crash.
///
/// Ten thousand objects of one interface cost little each: the interface's description, property layout and
/// (when the exporter shares them) handlers are held once, and an object keeps only its values, in an array.
public actor DBusObjectServer {
    public nonisolated let connection: DBusConnection
    /// The method calls and `NameOwnerChanged` signals the connection routes here, and the answers of interleaved
    /// calls, in one stream.
    private let inputs: AsyncStream<CallOrder.Input>
    /// Where the connection puts the messages, and an interleaved call its answer.
    private let feed: AsyncStream<CallOrder.Input>.Continuation
    private var objects: [ObjectPath: [String: ExportedState]] = [:]
    private var managers: Set<ObjectPath> = []
    private var peerVanished: (@Sendable (String) async -> Void)?
    /// Who waits for whom: the calls and departures held behind an interleaved call.
    private var order = CallOrder()
    /// The layout of each interface exported so far, by name, shared by every object exporting it.
    private var layouts: [String: PropertyLayout] = [:]
    /// Who in this program hears the signals emitted here (``emittedSignals()``).
    private var signalListeners: [AsyncStream<[DBusMessage]>.Continuation] = []
    /// The signals the running `apply(_:)` emitted so far, sent and handed to the listeners together when it ends;
    /// nil outside one.
    private var emittedInApply: SignalBatch?
    /// The bytes per object of the last `GetManagedObjects` reply, from which the next one reserves its size: grown by
    /// doubling, the reply of 10,000 tasks (9.4 MB) was copied through every size up to 16 MiB, a third of the page
    /// faults hauld took answering it.
    private var managedObjectsBytesPerObject = 0
    /// The paths below each object manager, sorted as `GetManagedObjects` lists them; dropped whenever an object comes
    /// or goes, not made anew for every reply. With the one-interface case of ``write(_:to:)``, a reply of 10,000 tasks
    /// costs hauld 82 ms of CPU instead of 88.
    private var managedPaths: [ObjectPath: [ObjectPath]] = [:]

    /// The signals of one `apply(_:)`.
    private struct SignalBatch {
        /// For the connection: one hop to its thread for a `*All`'s batch of 512, not one each.
        var encoded: [MessageCodec.Encoded] = []
        /// For the listeners in this program; none kept while there is none.
        var heard: [DBusMessage] = []
    }

    /// An exported interface (its first property values dropped) and its properties' current values, in the order
    /// of `layout`.
    private struct ExportedState {
        var exported: DBusExportedInterface
        let layout: PropertyLayout
        var values: [DBusValue]

        func value(_ name: String) -> DBusValue? { layout.index[name].map { values[$0] } }

        /// Stores `changes`, every one checked against the layout before any is stored; returns those that really
        /// changed, in name order.
        mutating func update(_ changes: [String: DBusValue]) throws -> [DBusDictEntry] {
            var changed: [(index: Int, value: DBusValue)] = []
            for (name, value) in changes {
                guard let index = layout.index[name], layout.types[index] == value.type else {
                    throw DBusError.failed(
                        "\(layout.description.name).\(name) is not a property of type \(value.type.signature)"
                    )
                }
                if values[index] != value { changed.append((index, value)) }
            }
            changed.sort { $0.index < $1.index }
            for (index, value) in changed { values[index] = value }
            return changed.map { DBusDictEntry(.string(layout.names[$0.index]), .variant($0.value)) }
        }

        /// The same for every property at once, `declared` in the order of the description: no name is looked up.
        mutating func update(every declared: [DBusValue]) throws -> [DBusDictEntry] {
            guard declared.count == values.count else {
                throw DBusError.failed(
                    "\(layout.description.name) has \(values.count) properties, not \(declared.count)"
                )
            }
            for (index, declaredIndex) in layout.declarationIndex.enumerated()
            where layout.types[index] != declared[declaredIndex].type {
                throw DBusError.failed(
                    "\(layout.description.name).\(layout.names[index]) is not of type "
                        + declared[declaredIndex].type.signature
                )
            }
            var changed: [DBusDictEntry] = []
            for (index, declaredIndex) in layout.declarationIndex.enumerated()
            where values[index] != declared[declaredIndex] {
                values[index] = declared[declaredIndex]
                changed.append(DBusDictEntry(.string(layout.names[index]), .variant(declared[declaredIndex])))
            }
            return changed
        }

        /// `a{sv}`, in the order of the names.
        var vardict: DBusValue {
            .dictionary(
                key: .string, value: .variant,
                zip(layout.names, values).map { DBusDictEntry(.string($0), .variant($1)) }
            )
        }
    }

    /// An interface's properties in a fixed order (sorted by name, the order `GetAll` sends them in).
    private final class PropertyLayout: Sendable {
        let description: DBusInterfaceDescription
        let names: [String]
        /// Each property's type, in the order of `names`.
        let types: [DBusType]
        let index: [String: Int]
        /// Where each property, in the order of `names`, is in the description's own order.
        let declarationIndex: [Int]

        init(_ description: DBusInterfaceDescription) {
            self.description = description
            let properties = description.properties.enumerated().sorted { $0.element.name < $1.element.name }
            names = properties.map(\.element.name)
            types = properties.map(\.element.type)
            declarationIndex = properties.map(\.offset)
            index = Dictionary(names.enumerated().map { ($1, $0) }) { first, _ in first }
        }
    }

    /// Starts receiving the connection's method calls (queued until `run()` handles them).
    public init(connection: DBusConnection) async throws {
        self.connection = connection
        (inputs, feed) = AsyncStream.makeStream()
        try await connection.route(matching: [.methodCalls, .nameOwnerChanged], into: feed) { .message($0) }
    }

    /// Handles incoming calls until the task is cancelled or the connection closes (and the calls still running have
    /// ended).
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await input in inputs {
                for step in order.admit(input, mode: mode(of:)) {
                    switch step {
                    case .handle(let message, .serial):
                        await handle(message)
                    case .handle(let message, .concurrent):
                        group.addTask { await self.handle(message) }
                    case .handle(let message, .interleaved):
                        group.addTask {
                            await self.handle(message)
                            self.feed.yield(.answered(sender: message.sender ?? ""))
                        }
                    case .departed(let name):
                        await peerVanished?(name)
                    }
                }
            }
        }
    }

    /// How the call's method runs beside the others (serially when the path, interface or member is unknown: it is
    /// answered with an error at once).
    private func mode(of message: DBusMessage) -> CallOrder.Mode {
        guard let path = message.path, let member = message.member, let interfaces = objects[path] else {
            return .serial
        }
        let declared = { (state: ExportedState) -> CallOrder.Mode? in
            if state.exported.concurrentMethods.contains(member) { return .concurrent }
            if state.exported.interleavedMethods.contains(member) { return .interleaved }
            return nil
        }
        if let name = message.interface { return interfaces[name].flatMap(declared) ?? .serial }
        return interfaces.values.lazy.compactMap(declared).first ?? .serial
    }

    /// Called, in order with method calls, with the unique name of each peer that leaves the bus.
    public func onPeerVanished(_ handler: @escaping @Sendable (String) async -> Void) {
        peerVanished = handler
    }

    // MARK: Objects

    /// Makes `path` an `org.freedesktop.DBus.ObjectManager` for the objects below it.
    public func addObjectManager(at path: ObjectPath) {
        managers.insert(path)
        managedPaths = [:]
    }

    /// Exports interfaces at `path` (added to those already there) and, if `announced`, announces them to its object
    /// manager (`InterfacesAdded`). Unannounced only while no client can hear it anyway.
    public func export(_ interfaces: [DBusExportedInterface], at path: ObjectPath, announced: Bool = true) throws {
        for interface in interfaces {
            try interface.validate()
            guard objects[path]?[interface.description.name] == nil else {
                throw DBusError.failed("\(interface.description.name) is already exported at \(path)")
            }
        }
        if objects[path] == nil { managedPaths = [:] }
        // `validate()` above has checked that every property of each description has its first value.
        for interface in interfaces {
            let layout = layout(of: interface.description)
            var exported = interface
            exported.properties = [:]
            objects[path, default: [:]][interface.description.name] = ExportedState(
                exported: exported, layout: layout, values: layout.names.map { interface.properties[$0]! }
            )
        }
        if announced, let manager = manager(of: path) {
            let names = Set(interfaces.map(\.description.name))
            let added = (objects[path] ?? [:]).filter { names.contains($0.key) }
            var signal = DBusMessage.signal(
                path: manager, interface: StandardInterfaces.objectManager.name, member: "InterfacesAdded"
            )
            send(
                try MessageCodec.encode(signal, signature: Self.interfacesAddedSignature) { writer throws(DBusError) in
                    try writer.write(.objectPath(path), as: .objectPath)
                    try Self.write(added, to: &writer)
                }
            )
            if !signalListeners.isEmpty {
                signal.body = [.objectPath(path), Self.interfacesAndProperties(added)]
                heard(signal)
            }
        }
    }

    /// Removes the object at `path` and announces it to its object manager.
    public func unexport(_ path: ObjectPath) throws {
        guard let removed = objects.removeValue(forKey: path) else { return }
        objects.shrinkIfSparse()
        managedPaths = [:]
        if let manager = manager(of: path) {
            try emitSignal(
                path: manager, interface: StandardInterfaces.objectManager.name, member: "InterfacesRemoved",
                [.objectPath(path), .strings(removed.keys.sorted())]
            )
        }
    }

    public func isExported(_ path: ObjectPath) -> Bool { objects[path] != nil }

    /// The shared layout of `description`'s properties (a new one for an interface of the same name that differs).
    private func layout(of description: DBusInterfaceDescription) -> PropertyLayout {
        if let layout = layouts[description.name], layout.description == description { return layout }
        let layout = PropertyLayout(description)
        layouts[description.name] = layout
        return layout
    }

    // MARK: Properties and signals

    /// The current value of a property.
    public func property(_ name: String, interface: String, at path: ObjectPath) -> DBusValue? {
        objects[path]?[interface]?.value(name)
    }

    /// Stores new property values and emits one `PropertiesChanged` with those that really changed, in name order.
    /// The types are checked against the layout before anything is stored, and the signal, whose signature is the
    /// standard one, is sent without `emitSignal`'s lookups.
    public func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) throws {
        // In place: a copy of the state would copy its values too, once for each of the 20,000.
        guard let entries = try objects[path]?[interface]?.update(changes) else {
            throw DBusError.failed("\(interface) is not exported at \(path)")
        }
        try emitPropertiesChanged(entries, interface: interface, at: path)
    }

    /// `updateProperties` with every property's value, in the order `interface`'s description declares them: for an
    /// exporter that has them all at hand, no name is hashed or looked up on either side (a `*All` of 10,000 tasks
    /// publishes 20,000 of these).
    public func updateAllProperties(_ values: [DBusValue], interface: String, at path: ObjectPath) throws {
        guard let entries = try objects[path]?[interface]?.update(every: values) else {
            throw DBusError.failed("\(interface) is not exported at \(path)")
        }
        try emitPropertiesChanged(entries, interface: interface, at: path)
    }

    private func emitPropertiesChanged(_ entries: [DBusDictEntry], interface: String, at path: ObjectPath) throws {
        guard !entries.isEmpty else { return }
        let signal = DBusMessage.signal(
            path: path, interface: StandardInterfaces.properties.name, member: "PropertiesChanged",
            body: [.string(interface), .dictionary(key: .string, value: .variant, entries), .strings([])]
        )
        try emit(signal, as: Self.propertiesChangedTypes)
    }

    /// Carries out `changes` in order, in one turn of the server, and returns the position and error of each that
    /// failed (the others are carried out all the same). A `*All` of 10,000 tasks makes 20,000 changes: one at a
    /// time, each cost its sender two hops to the server and back. The signals they emit go to the connection's
    /// thread together, in order, when it ends.
    public func apply(_ changes: [DBusObjectChange]) -> [(index: Int, error: any Error)] {
        emittedInApply = SignalBatch()
        defer {
            if let emitted = emittedInApply.take() {
                if !emitted.encoded.isEmpty { connection.enqueue(emitted.encoded) }
                if !emitted.heard.isEmpty { hand(emitted.heard) }
            }
        }
        var failures: [(index: Int, error: any Error)] = []
        for (index, change) in changes.enumerated() {
            do {
                switch change {
                case .export(let interfaces, let path, let announced):
                    try export(interfaces, at: path, announced: announced)
                case .unexport(let path):
                    try unexport(path)
                case .properties(let properties, let interface, let path):
                    try updateProperties(properties, interface: interface, at: path)
                case .allProperties(let values, let interface, let path):
                    try updateAllProperties(values, interface: interface, at: path)
                case .signal(let path, let interface, let member, let body):
                    try emitSignal(path: path, interface: interface, member: member, body)
                }
            } catch {
                failures.append((index, error))
            }
        }
        return failures
    }

    /// Emits a signal that the object at `path` declares (or a standard one), checking its signature.
    public func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue] = []) throws {
        let description = objects[path]?[interface]?.exported.description
            ?? StandardInterfaces.named(interface)
        guard let signal = description?.signal(member) else {
            throw DBusError.failed("\(interface).\(member) is not a signal of \(path)")
        }
        try emit(
            DBusMessage.signal(path: path, interface: interface, member: member, body: body),
            as: signal.arguments.map(\.type)
        )
    }

    /// Sends `signal`, whose body must be of `types`, and hands it to the listeners in this program. Its interface and
    /// member are an exported interface's, checked when it was exported, or a standard one's: the header is not
    /// checked again, and each value is checked as it is written (a `*All` of 10,000 tasks sends 20,000 signals).
    private func emit(_ signal: DBusMessage, as types: [DBusType]) throws {
        send(try MessageCodec.encode(declared: signal, as: types))
        heard(signal)
    }

    /// Sends an encoded signal: with the rest of the running `apply(_:)`'s, or alone.
    private func send(_ encoded: MessageCodec.Encoded) {
        if emittedInApply != nil {
            emittedInApply?.encoded.append(encoded)
        } else {
            connection.enqueue(encoded)
        }
    }

    /// Every signal emitted here from now on, in the order it goes to the bus and with the body a client receives, for
    /// a part of this program that follows them (hauld's desktop bridge) without the bus's round trip: for each, the
    /// bus then routes, and that part checks and decodes, nothing. The signals of one `apply(_:)` come as one element
    /// (a `*All`'s batch sends 512), alone the others.
    public func emittedSignals() -> AsyncStream<[DBusMessage]> {
        let (signals, continuation) = AsyncStream.makeStream(of: [DBusMessage].self)
        signalListeners.append(continuation)
        return signals
    }

    /// Hands `signal` to the listeners: with the rest of the running `apply(_:)`'s, or alone.
    private func heard(_ signal: DBusMessage) {
        guard !signalListeners.isEmpty else { return }
        if emittedInApply != nil {
            emittedInApply?.heard.append(signal)
        } else {
            hand([signal])
        }
    }

    /// Hands `signals` to every listener whose stream is still followed; one that is not (its follower gone) is
    /// dropped, so that nothing piles up for nobody.
    private func hand(_ signals: [DBusMessage]) {
        var index = signalListeners.startIndex
        while index < signalListeners.endIndex {
            if case .terminated = signalListeners[index].yield(signals) {
                signalListeners.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    // MARK: Dispatch

    /// What a call is answered with: values, or the objects below a manager, written straight from the object table
    /// into the reply (ten thousand objects built as values first took 25 MB and a tenth of the call's time).
    private enum Answer {
        case values([DBusValue])
        case managedObjects(below: ObjectPath)
    }

    private func handle(_ message: DBusMessage) async {
        let call = DBusMethodCall(message: message)
        let answer: Result<Answer, DBusError>
        do {
            answer = .success(try await dispatch(call))
        } catch let error as DBusError {
            answer = .failure(error)
        } catch {
            answer = .failure(.failed(String(describing: error)))
        }
        guard !message.noReplyExpected else { return }
        do {
            switch answer {
            case .success(.values(let values)): try await connection.send(message.makeReturn(values))
            case .success(.managedObjects(let manager)):
                try await connection.send(managedObjects(below: manager, answering: message))
            case .failure(let error): try await connection.send(message.makeError(error))
            }
        } catch {
            // The reply itself was malformed (a handler returned a bad value): answer with that instead.
            try? await connection.send(message.makeError(error))
        }
    }

    private func dispatch(_ call: DBusMethodCall) async throws -> Answer {
        let path = call.path
        let interfaceName = call.message.interface ?? standardInterface(declaring: call.member, at: path)
        switch interfaceName {
        case StandardInterfaces.introspectable.name?:
            try check(call, against: StandardInterfaces.introspectable)
            guard objects[path] != nil || managers.contains(path) || !children(of: path).isEmpty else {
                throw DBusError.unknownObject("no object at \(path)")
            }
            return .values([.string(introspect(path))])
        case StandardInterfaces.properties.name?:
            try check(call, against: StandardInterfaces.properties)
            return .values(try await handleProperties(call))
        case StandardInterfaces.objectManager.name? where managers.contains(path):
            try check(call, against: StandardInterfaces.objectManager)
            return .managedObjects(below: path)
        default:
            break
        }
        guard let interfaces = objects[path] else {
            throw DBusError.unknownObject("no object at \(path)")
        }
        let state: ExportedState
        if let interfaceName {
            guard let found = interfaces[interfaceName] else {
                throw DBusError.unknownInterface("\(path) has no interface \(interfaceName)")
            }
            state = found
        } else {
            guard let found = interfaces.values.first(where: { $0.exported.description.method(call.member) != nil })
            else {
                throw DBusError.unknownMethod("\(path) has no method \(call.member)")
            }
            state = found
        }
        try check(call, against: state.exported.description)
        guard let handler = state.exported.methods[call.member] else {
            throw DBusError.unknownMethod("\(state.exported.description.name) has no method \(call.member)")
        }
        return .values(try await handler(call))
    }

    /// The standard interface that a call naming no interface goes to: the interface is optional in a method call,
    /// and `Introspect` or `Get` must work without it on an object as on an intermediate node. An exported
    /// interface declaring the member takes precedence. (`Peer` is left out: libdbus answers it, given its name.)
    private func standardInterface(declaring member: String, at path: ObjectPath) -> String? {
        if let interfaces = objects[path],
            interfaces.values.contains(where: { $0.exported.description.method(member) != nil })
        {
            return nil
        }
        let standard = [StandardInterfaces.introspectable, StandardInterfaces.properties]
            + (managers.contains(path) ? [StandardInterfaces.objectManager] : [])
        return standard.first { $0.method(member) != nil }?.name
    }

    /// Unknown member → `UnknownMethod`; wrong argument types → `InvalidArgs`.
    private func check(_ call: DBusMethodCall, against interface: DBusInterfaceDescription) throws {
        guard let method = interface.method(call.member) else {
            throw DBusError.unknownMethod("\(interface.name) has no method \(call.member)")
        }
        let signature = call.message.signature
        guard signature == method.inputSignature else {
            throw DBusError.invalidArgs(
                "\(interface.name).\(method.name) takes '\(method.inputSignature)', not '\(signature)'"
            )
        }
    }

    private func handleProperties(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let arguments = call.arguments
        guard let interfaceName = arguments.first?.stringValue else { return [] }
        guard let state = objects[call.path]?[interfaceName] else {
            guard objects[call.path] != nil else { throw DBusError.unknownObject("no object at \(call.path)") }
            throw DBusError.unknownInterface("\(call.path) has no interface \(interfaceName)")
        }
        switch call.member {
        case "GetAll":
            return [state.vardict]
        case "Get":
            let name = arguments[1].stringValue ?? ""
            guard let value = state.value(name) else {
                throw DBusError.unknownProperty("\(interfaceName) has no property \(name)")
            }
            return [.variant(value)]
        default:  // "Set": check() admitted only the three declared methods.
            let name = arguments[1].stringValue ?? ""
            guard let property = state.exported.description.property(name) else {
                throw DBusError.unknownProperty("\(interfaceName) has no property \(name)")
            }
            guard property.access == .readwrite else {
                throw DBusError.propertyReadOnly("\(interfaceName).\(name) is read-only")
            }
            let value = arguments[2].unwrappedOnce
            guard value.type == property.type else {
                throw DBusError.invalidArgs(
                    "\(interfaceName).\(name) is of type '\(property.type.signature)', not '\(value.type.signature)'"
                )
            }
            try await state.exported.setProperty?(name, value, call)
            try updateProperties([name: value], interface: interfaceName, at: call.path)
            return []
        }
    }

    // MARK: Introspection and object manager

    private func introspect(_ path: ObjectPath) -> String {
        var interfaces: [DBusInterfaceDescription] = []
        if let exported = objects[path] {
            interfaces = StandardInterfaces.common + exported.keys.sorted().compactMap { exported[$0]?.exported.description }
        } else if managers.contains(path) {
            interfaces = StandardInterfaces.common
        }
        if managers.contains(path) { interfaces.append(StandardInterfaces.objectManager) }
        return IntrospectionXML.node(interfaces: interfaces, children: children(of: path))
    }

    /// Names of the direct children of `path` that lead to exported objects.
    private func children(of path: ObjectPath) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names: Set<String> = []
        for candidate in Set(objects.keys).union(managers) where candidate.rawValue.hasPrefix(prefix) {
            if let first = candidate.rawValue.dropFirst(prefix.count).split(separator: "/").first {
                names.insert(String(first))
            }
        }
        return names.sorted()
    }

    /// The nearest object manager strictly above `path`.
    private func manager(of path: ObjectPath) -> ObjectPath? {
        var nearest: ObjectPath?
        for manager in managers where manager != path && path.isDescendant(of: manager) {
            if let found = nearest, found.rawValue.utf8.count >= manager.rawValue.utf8.count { continue }
            nearest = manager
        }
        return nearest
    }

    private static let propertiesChangedTypes = StandardInterfaces.properties.signal("PropertiesChanged")!.arguments
        .map(\.type)
    private static let interfacesAddedSignature = DBusSignature(
        [.objectPath, StandardInterfaces.interfacesAndProperties]
    )
    private static let managedObjectsSignature = DBusSignature([StandardInterfaces.managedObjectsType])

    /// The reply to `GetManagedObjects`: every object below `manager`, each as `InterfacesAdded` announced it.
    private func managedObjects(
        below manager: ObjectPath, answering call: DBusMessage
    ) throws(DBusError) -> MessageCodec.Encoded {
        let paths = paths(below: manager)
        let reply = call.makeReturn()
        let capacity = paths.count * managedObjectsBytesPerObject * 17 / 16
        let encoded = try MessageCodec.encode(
            reply, signature: Self.managedObjectsSignature, capacity: capacity
        ) { writer throws(DBusError) in
            try writer.dictionary { writer throws(DBusError) in
                for path in paths {
                    let interfaces = objects[path] ?? [:]
                    try writer.entry(.objectPath(path), as: .objectPath) { writer throws(DBusError) in
                        try Self.write(interfaces, to: &writer)
                    }
                }
            }
        }
        if case .marshalled(let bytes) = encoded, !paths.isEmpty {
            managedObjectsBytesPerObject = bytes.count / paths.count
        }
        return encoded
    }

    /// The objects' paths below `manager`, sorted.
    private func paths(below manager: ObjectPath) -> [ObjectPath] {
        if let paths = managedPaths[manager] { return paths }
        let paths = objects.keys.filter { self.manager(of: $0) == manager }.sorted()
        managedPaths[manager] = paths
        return paths
    }

    /// An object's interfaces as `InterfacesAdded` and `GetManagedObjects` list them: the exported ones, in name order.
    /// The standard interfaces every object has are left out, as GDBus does: they carry no properties, and naming them
    /// cost every object of a 10,000-task reply 14 % of its bytes and every side of the bus a tenth of its CPU.
    private static func listed(_ interfaces: [String: ExportedState]) -> [(name: String, state: ExportedState)] {
        interfaces.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// What ``write(_:to:)`` writes, as a value.
    private static func interfacesAndProperties(_ interfaces: [String: ExportedState]) -> DBusValue {
        .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            listed(interfaces).map { DBusDictEntry(.string($0.name), $0.state.vardict) }
        )
    }

    /// An object's `a{sa{sv}}`, as `InterfacesAdded` and `GetManagedObjects` carry it (``listed(_:)``), written
    /// straight from the object table.
    private static func write(_ interfaces: [String: ExportedState], to writer: inout WireWriter) throws(DBusError) {
        try writer.dictionary { writer throws(DBusError) in
            // The usual object (each of hauld's tasks) has one interface: nothing to sort, and no array made for it.
            if interfaces.count == 1, let (name, state) = interfaces.first {
                try write(name, state, to: &writer)
            } else {
                for (name, state) in listed(interfaces) { try write(name, state, to: &writer) }
            }
        }
    }

    /// One interface's entry of an object's `a{sa{sv}}`: its name and its properties.
    private static func write(_ name: String, _ state: ExportedState, to writer: inout WireWriter) throws(DBusError) {
        try writer.entry(name) { writer throws(DBusError) in
            try writer.dictionary { writer throws(DBusError) in
                for (property, value) in zip(state.layout.names, state.values) {
                    try writer.entry(property) { writer throws(DBusError) in try writer.variant(value) }
                }
            }
        }
    }
}

extension DBusValue {
    /// A `Set` value arrives as a variant; its content is the property value (which may itself be a variant).
    var unwrappedOnce: DBusValue { if case .variant(let inner) = self { inner } else { self } }
}
