import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// A private connection to a message bus, integrated with Swift concurrency.
///
/// Every libdbus call runs on the connection's thread (``BusLoop``), which is also this actor's executor: libdbus's
/// watches and timeouts are that thread's epoll set and timers, so outgoing messages are flushed at once and
/// incoming ones are dispatched as they arrive. No call ever blocks the Swift concurrency pool.
public actor DBusConnection {
    nonisolated let loop: BusLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    let handle: ConnectionHandle
    /// This connection's unique name on the bus, such as `:1.42`.
    public nonisolated let uniqueName: String

    private var isClosed = false
    /// Callers of `written(through:)`, each waiting for the bus to have read everything before its mark.
    var writeWaiters: [(mark: WriteMark, continuation: CheckedContinuation<Void, Never>)] = []
    /// The bytes of every message handed to libdbus so far, counted as libdbus counts its outgoing queue (a message's
    /// header and body): less what is still queued, that is what the bus has read. A message with file descriptors is
    /// not counted, which can only make a waiter wait longer, never shorter.
    var handedBytes: UInt64 = 0
    private var callbackContext: CallbackContext?
    var mainLoop = MainLoopSources()
    var pendingCalls: [UInt32: PendingCall] = [:]
    private var routes: [UInt64: Route] = [:]
    /// Messages routed but not yet handed to their streams (``deliverRouted()``).
    private var routed: [(yield: @Sendable (DBusMessage) -> Void, message: DBusMessage)] = []
    private var nextRouteID: UInt64 = 0
    /// The owners of the well-known names that routes' rules have as sender: only the bus can resolve them, and it
    /// delivers one copy of a signal for all of a connection's rules, so each route checks the sender itself.
    private var followedNames: [String: FollowedName] = [:]

    private init(loop: BusLoop, handle: ConnectionHandle, uniqueName: String) {
        self.loop = loop
        self.handle = handle
        self.uniqueName = uniqueName
    }

    deinit {
        // The last libdbus reference goes on the loop's thread, where every other libdbus call is made; the thread
        // ends after it, closing the descriptors of the watches left.
        let handle = handle
        loop.async { withExtendedLifetime(handle) {} }
        loop.stop()
    }

    /// Connects to the bus at a D-Bus address such as `unix:path=/run/user/1000/bus`.
    public static func connect(address: String) async throws(DBusError) -> DBusConnection {
        guard let loop = BusLoop(name: "haul.dbus") else { throw .failed("no thread for the connection") }
        let result: Result<(ConnectionHandle, uniqueName: String), DBusError> = await withCheckedContinuation {
            continuation in
            // Connecting and `Hello` block; they run on the connection's own thread, not on the Swift pool.
            loop.async {
                continuation.resume(returning: Result { () throws(DBusError) in try ConnectionHandle.open(address: address) })
            }
        }
        let (handle, uniqueName): (ConnectionHandle, String)
        do {
            (handle, uniqueName) = try result.get()
        } catch {
            loop.stop()
            throw error
        }
        let connection = DBusConnection(loop: loop, handle: handle, uniqueName: uniqueName)
        await connection.start()
        return connection
    }

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    public static func sessionBus() async throws(DBusError) -> DBusConnection {
        try await connect(address: sessionBusAddress())
    }

    /// The session bus address this process would use.
    public static func sessionBusAddress() throws(DBusError) -> String {
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty {
            return address
        }
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty,
            access(runtime + "/bus", F_OK) == 0
        {
            return "unix:path=\(runtime)/bus"
        }
        throw DBusError(
            name: "org.freedesktop.DBus.Error.NoServer",
            message: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist"
        )
    }

    /// Connects to the system bus named by `DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket.
    public static func systemBus() async throws(DBusError) -> DBusConnection {
        let variable = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        return try await connect(address: systemBusAddress(environment: variable))
    }

    /// The system bus address for a value of `DBUS_SYSTEM_BUS_ADDRESS` (nil when unset): the value unless it is
    /// empty, else libdbus's default, `unix:path=/var/run/dbus/system_bus_socket`.
    public static func systemBusAddress(environment value: String?) -> String {
        if let value, !value.isEmpty { return value }
        return "unix:path=/var/run/dbus/system_bus_socket"
    }

    public var isConnected: Bool { !isClosed && dbus_connection_get_is_connected(handle.pointer) != 0 }

    /// Closes the connection: pending calls fail with `Disconnected`, subscriptions finish.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        finishEverything()
        dbus_connection_close(handle.pointer)
        mainLoop.cancelAll(on: loop)
    }

    // MARK: Sending

    /// Sends a message without waiting for any reply (signals, replies, fire-and-forget calls).
    public func send(_ message: DBusMessage) throws(DBusError) {
        try send(MessageCodec.encode(message))
    }

    /// Sends a message already encoded (by the object server, for a reply it writes in place).
    func send(_ message: MessageCodec.Encoded) throws(DBusError) {
        guard !isClosed else { throw .disconnected("the connection is closed") }
        let raw = try MessageCodec.libdbusMessage(message)
        defer { dbus_message_unref(raw) }
        guard dbus_connection_send(handle.pointer, raw, nil) != 0 else {
            throw .failed("out of memory while queueing a message")
        }
        handedBytes += message.byteCount
        // libdbus writes what it can at once: this message may have taken the rest of the queue with it.
        resumeWriteWaiters()
    }

    /// Validates and marshals a message now and sends it from the connection's thread without suspending the caller.
    ///
    /// Messages enqueued from one context go out in the order they were enqueued, which is what signals
    /// announcing successive changes need.
    public nonisolated func enqueue(_ message: DBusMessage) throws(DBusError) {
        enqueue(try MessageCodec.encode(message))
    }

    /// The same for a message already encoded (by the object server, for a signal it writes in place).
    nonisolated func enqueue(_ encoded: MessageCodec.Encoded) {
        enqueue([encoded])
    }

    /// The same for several, in order, in one turn of the connection's thread.
    nonisolated func enqueue(_ batch: [MessageCodec.Encoded]) {
        loop.async { [weak self] in
            self?.assumeIsolated { connection in
                for encoded in batch { try? connection.send(encoded) }
            }
        }
    }

    /// How long a call waits for its reply unless told otherwise: libdbus's own default.
    public static let defaultTimeout: Duration = .seconds(25)

    /// Sends a method call and waits for its reply. An error reply is thrown as a `DBusError`.
    public func call(_ message: DBusMessage, timeout: Duration = defaultTimeout) async throws -> DBusMessage {
        guard !isClosed else { throw DBusError.disconnected("the connection is closed") }
        try Task.checkCancellation()
        var message = message
        message.noReplyExpected = false
        let encoded = try MessageCodec.encode(message)
        let raw = try MessageCodec.libdbusMessage(encoded)
        defer { dbus_message_unref(raw) }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(handle.pointer, raw, &pending, Self.milliseconds(timeout)) != 0,
            let pending
        else {
            throw DBusError.disconnected("the connection is closed")
        }
        handedBytes += encoded.byteCount
        resumeWriteWaiters()
        let serial = dbus_message_get_serial(raw)
        let pendingKey = Self.key(pending)
        let reply: DBusMessage = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                registerPendingCall(pendingKey, serial: serial, continuation: continuation)
            }
        } onCancel: {
            Task { await self.cancelCall(serial: serial) }
        }
        if let error = reply.error { throw error }
        return reply
    }

    /// A reply timeout in libdbus's terms. libdbus aborts the process on a negative timeout other than -1 (which
    /// means its 25 s default), so a timeout that has already run out becomes 0 and fails the call at once with
    /// `NoReply`; one too long for 32 bits becomes `DBUS_TIMEOUT_INFINITE` (`Int32.max`).
    static func milliseconds(_ timeout: Duration) -> Int32 {
        let milliseconds = (timeout / .milliseconds(1)).rounded(.up)
        return milliseconds < Double(Int32.max) ? Int32(max(milliseconds, 0)) : Int32.max
    }

    // MARK: Receiving

    /// A stream of the incoming messages that match any of `rules`, in arrival order.
    ///
    /// Signal rules are added to the bus before this returns and removed when the stream ends. A method call
    /// that no stream takes is answered `UnknownMethod` by libdbus, so every call gets a reply.
    public func messages(matching rules: [MatchRule]) async throws -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusMessage.self)
        try await route(matching: rules, into: continuation) { $0 }
        return stream
    }

    /// As `messages(matching:)`, into a stream the caller made, each message wrapped by `wrap`: for a subscriber that
    /// puts inputs of its own in the same stream, in order with the messages, without a task to forward them.
    package func route<Element>(
        matching rules: [MatchRule], into continuation: AsyncStream<Element>.Continuation,
        as wrap: @escaping @Sendable (DBusMessage) -> Element
    ) async throws {
        // Not just `isClosed`: after the bus has gone, `Disconnected` has already finished every stream, and a new
        // one (of method-call rules, which need no `AddMatch` to fail) would never end.
        guard isConnected else { throw DBusError.disconnected("the connection is closed") }
        let id = nextRouteID
        nextRouteID += 1
        routes[id] = Route(rules: rules, yield: { continuation.yield(wrap($0)) }, finish: { continuation.finish() })
        let names = Route.wellKnownSenders(rules)
        // Counted at once, as `removeRoute` uncounts them, even if following one fails.
        for name in names { followedNames[name, default: FollowedName()].routes += 1 }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeRoute(id) }
        }
        do {
            // Owners first: a signal arriving before its sender's owner is known would be dropped.
            for name in names { try await follow(name) }
            for rule in rules where rule.needsBusRegistration {
                _ = try await callBus("AddMatch", [.string(rule.busString)])
            }
        } catch {
            removeRoute(id)
            throw error
        }
    }

    private func removeRoute(_ id: UInt64) {
        guard let route = routes.removeValue(forKey: id) else { return }
        route.finish()
        let names = Route.wellKnownSenders(route.rules)
        for name in names {
            followedNames[name]?.routes -= 1
            if followedNames[name]?.routes == 0 { followedNames[name] = nil }
        }
        for rule in route.rules.filter(\.needsBusRegistration) + names.map(Self.ownerRule) where !isClosed {
            var message = DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "RemoveMatch", body: [.string(rule.busString)]
            )
            message.noReplyExpected = true
            try? send(message)
        }
    }

    /// Follows the owner of `name` for one more route: the bus's `NameOwnerChanged` for it first, then its current
    /// owner, so that no change goes unseen. (Each route adds its own copy of the rule; the bus counts them.)
    private func follow(_ name: String) async throws {
        _ = try await callBus("AddMatch", [.string(Self.ownerRule(name).busString)])
        let changesBefore = followedNames[name]?.changes
        let owner: String
        do {
            owner = try await nameOwner(name)
        } catch let error as DBusError where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            owner = ""
        }
        // A change seen meanwhile carries the owner at least as recent as this answer.
        if followedNames[name]?.changes == changesBefore { followedNames[name]?.owner = owner }
    }

    /// A `NameOwnerChanged(name, old, new)` from the bus itself, whose name no peer can send as.
    private static func ownerChange(_ message: DBusMessage) -> (name: String, owner: String)? {
        guard message.kind == .signal, message.sender == "org.freedesktop.DBus",
            message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged", message.body.count == 3,
            let name = message.body[0].stringValue, let owner = message.body[2].stringValue
        else { return nil }
        return (name, owner)
    }

    private static func ownerRule(_ name: String) -> MatchRule {
        var rule = MatchRule.nameOwnerChanged
        rule.arg0 = name
        return rule
    }

    /// Called by the filter for every incoming message; returns whether a route took it.
    func route(_ message: DBusMessage) -> Bool {
        if message.kind == .signal, message.interface == "org.freedesktop.DBus.Local",
            message.member == "Disconnected"
        {
            finishEverything()
            return true
        }
        if let change = Self.ownerChange(message), followedNames[change.name] != nil {
            followedNames[change.name]?.owner = change.owner
            followedNames[change.name]?.changes += 1
        }
        var taken = false
        let owners = followedNames
        for route in routes.values
        where route.rules.contains(where: { $0.matches(message, ownerOf: { owners[$0]?.owner }) }) {
            routed.append((route.yield, message))
            taken = true
        }
        if routed.count >= Self.routedBatch { deliverRouted() }
        return taken
    }

    /// Hands the routed messages to their streams, in order. A stream's reader woken for each message (most readers
    /// take one faster than the connection decodes the next, and wait again) cost a thread's wake-up per message:
    /// during a burst of ten thousand signals, a tenth of a listener's time. Handed over at the end of each drain, a
    /// batch at most, the reader finds them waiting. Called before a reply resumes its caller and before the streams
    /// finish, so that neither overtakes a message that came before it.
    func deliverRouted() {
        guard !routed.isEmpty else { return }
        for (yield, message) in routed { yield(message) }
        routed.removeAll(keepingCapacity: true)
    }

    /// At most this many messages wait for the end of a drain: a burst's first message waits for no more.
    package static let routedBatch = 64

    private func finishEverything() {
        deliverRouted()
        let routes = self.routes
        self.routes = [:]
        for route in routes.values { route.finish() }
        failPendingCalls(DBusError.disconnected("the connection was closed"))
        resumeWriteWaiters()
    }

    // MARK: Main loop

    private func start() {
        let context = CallbackContext(connection: self)
        callbackContext = context
        installMainLoop(context: context)
        drain()
    }

    /// Dispatches every message libdbus has queued. Never called from inside a libdbus callback.
    func drain() {
        guard !isClosed else { return }
        while dbus_connection_dispatch(handle.pointer) == DBUS_DISPATCH_DATA_REMAINS {}
        deliverRouted()
    }

    /// Schedules a drain from inside a libdbus callback, where dispatching again would re-enter libdbus.
    nonisolated func scheduleDrain() {
        loop.async { [weak self] in
            guard let self else { return }
            self.assumeIsolated { $0.drain() }
        }
    }
}

/// One subscriber of incoming messages.
struct Route {
    let rules: [MatchRule]
    /// Hands a matching message to the subscriber's stream.
    let yield: @Sendable (DBusMessage) -> Void
    /// Ends the subscriber's stream.
    let finish: @Sendable () -> Void

    static func wellKnownSenders(_ rules: [MatchRule]) -> [String] {
        Array(Set(rules.compactMap(\.wellKnownSender))).sorted()
    }
}

/// The owner of a well-known name that routes match senders against.
struct FollowedName {
    /// The owner's unique name; "" when the name has none, nil until known (nothing matches then).
    var owner: String?
    /// How many `NameOwnerChanged` signals have been seen for the name.
    var changes = 0
    var routes = 0
}
