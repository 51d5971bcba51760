import DBusKit
import HaulTestSupport
import Testing

@Suite("Peers: departures, names, timeouts and cancellation")
struct PeerTests {
    static let service = InteropTests.service

    @Test func aDepartedPeerIsReportedWithinASecond() async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            await fixture.objects.onPeerVanished { name in await events.append("gone \(name)") }
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let vanished = Recorder<String>()
            let departures = try await fixture.client.vanishedPeers()
            let watcher = Task {
                for await name in departures { await vanished.append(name) }
            }
            defer { watcher.cancel() }

            let third = try await DBusConnection.connect(address: fixture.bus.address)
            let name = third.uniqueName
            _ = try await third.call(
                destination: Self.service, path: SlowObject.path, interface: SlowObject.interface, member: "Sleep",
                [.uint32(0)]
            )
            await third.close()
            #expect(await !third.isConnected)

            let reported = await waitUntil(within: 1) {
                let seenByStream = await vanished.values.contains(name)
                let seenByServer = await events.values.contains("gone \(name)")
                return seenByStream && seenByServer
            }
            let streamed = await vanished.values
            let served = await events.values
            #expect(reported, "vanishedPeers: \(streamed), onPeerVanished: \(served)")
            // Seen by the server in the order the bus sent them: the peer's call, then its departure.
            #expect(served == ["call \(name)", "done \(name)", "gone \(name)"])
            // Only the peer that left: the fixture's own connections are still there.
            #expect(streamed == [name])
        }
    }

    @Test func wellKnownNamesAreOwnedOnce() async throws {
        try await BusFixture.with { fixture in
            let third = try await DBusConnection.connect(address: fixture.bus.address)
            #expect(try await third.requestName(Self.service) == .exists)
            #expect(try await fixture.server.requestName(Self.service) == .alreadyOwner)
            #expect(try await fixture.client.nameOwner(Self.service) == fixture.server.uniqueName)

            #expect(try await third.requestName("org.example.Third") == .primaryOwner)
            #expect(try await fixture.client.requestName("org.example.Third") == .exists)
            #expect(try await fixture.client.nameHasOwner("org.example.Third"))
            #expect(try await fixture.client.nameHasOwner(third.uniqueName))
            #expect(try await !fixture.client.nameHasOwner("org.example.Nobody"))
            await #expect(throws: DBusError.self) { try await fixture.client.nameOwner("org.example.Nobody") }

            // A departing connection's names are released with it.
            await third.close()
            let released = try await waitUntil(within: 5) {
                try await !fixture.client.nameHasOwner("org.example.Third")
            }
            #expect(released)
            #expect(try await fixture.client.requestName("org.example.Third") == .primaryOwner)
        }
    }

    @Test func callsToAVanishedPeerFailInsteadOfHanging() async throws {
        try await BusFixture.with { fixture in
            let third = try await DBusConnection.connect(address: fixture.bus.address)
            let thirdObjects = try await DBusObjectServer(connection: third)
            let events = Recorder<String>()
            try await thirdObjects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let running = Task { await thirdObjects.run() }
            defer { running.cancel() }
            let name = third.uniqueName
            let client = fixture.client

            // A call the peer is still working on when it leaves: the bus answers for it.
            let pending = Task {
                try await client.call(
                    destination: name, path: SlowObject.path, interface: SlowObject.interface, member: "Sleep",
                    [.uint32(5_000)], timeout: .seconds(60)
                )
            }
            #expect(await waitUntil(within: 5) { await events.values.contains("call \(fixture.client.uniqueName)") })
            await third.close()
            let outcome = try await withTimeout(seconds: 5) { await pending.result }
            #expect(throws: DBusError.self) { try outcome.get() }
            if case .failure(let error as DBusError) = outcome {
                #expect(error.name == "org.freedesktop.DBus.Error.NoReply")
            }

            // Later calls to the departed name fail at once.
            let later = try await withTimeout(seconds: 5) {
                await resultOf {
                    try await client.call(
                        destination: name, path: SlowObject.path, interface: SlowObject.interface, member: "Sleep",
                        [.uint32(0)]
                    )
                }
            }
            #expect(throws: DBusError.self) { try later.get() }
            if case .failure(let error as DBusError) = later {
                #expect(error.name == "org.freedesktop.DBus.Error.ServiceUnknown")
            }
            let unowned = try await withTimeout(seconds: 5) {
                await resultOf {
                    try await client.call(
                        destination: "org.example.Nobody", path: "/", interface: "org.example.Nobody", member: "Hello"
                    )
                }
            }
            #expect(throws: DBusError.self) { try unowned.get() }

            // A closed connection refuses calls rather than waiting for ever.
            await #expect(throws: DBusError.self) {
                try await third.call(destination: Self.service, path: BusFixture.path, interface: BusFixture.interface,
                                     member: "Add", [.int32(1), .int32(2)])
            }
        }
    }

    /// When the bus itself goes away, everything waiting on it ends: calls, subscriptions, the object server.
    @Test func theBusGoingAwayEndsEveryWait() async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let client = fixture.client
            let server = fixture.server
            let ticks = try await client.messages(matching: [MatchRule(kind: .signal, member: "Tick")])
            let clientObjects = try await DBusObjectServer(connection: client)
            let serving = Task { await clientObjects.run() }
            defer { serving.cancel() }
            let pending = Task {
                try await client.call(
                    destination: server.uniqueName, path: SlowObject.path, interface: SlowObject.interface,
                    member: "Sleep", [.uint32(10_000)], timeout: .seconds(60)
                )
            }
            #expect(await waitUntil(within: 5) { await events.values.contains("call \(client.uniqueName)") })

            fixture.bus.stop()
            let outcome = try await withTimeout(seconds: 5) { await pending.result }
            #expect(throws: DBusError.self) { try outcome.get() }
            try await withTimeout(seconds: 5) { for await _ in ticks {} }
            try await withTimeout(seconds: 5) { await serving.value }
            #expect(await !client.isConnected)

            // Nothing started afterwards waits for ever either.
            await #expect(throws: DBusError.self) {
                try await withTimeout(seconds: 5) {
                    try await client.call(
                        destination: server.uniqueName, path: BusFixture.path, interface: BusFixture.interface,
                        member: "Add", [.int32(1), .int32(2)]
                    )
                }
            }
            await #expect(throws: DBusError.self) {
                _ = try await withTimeout(seconds: 5) { try await client.messages(matching: [.methodCalls]) }
            }
            await #expect(throws: DBusError.self) {
                _ = try await withTimeout(seconds: 5) { try await DBusObjectServer(connection: client) }
            }
        }
    }

    @Test func aCallThatIsNeverAnsweredTimesOutWithNoReply() async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let client = fixture.client
            let outcome = try await withTimeout(seconds: 15) {
                await resultOf {
                    try await client.call(
                        destination: Self.service, path: SlowObject.path, interface: SlowObject.interface,
                        member: "Sleep", [.uint32(10_000)], timeout: .milliseconds(200)
                    )
                }
            }
            #expect(throws: DBusError.self) { try outcome.get() }
            if case .failure(let error as DBusError) = outcome {
                #expect(error.name == "org.freedesktop.DBus.Error.NoReply")
            }
            // NoReply, not the handler's answer (it comes after 10 s): the timeout ended the call. (No bound on the
            // time it took: under a loaded machine's scheduling it was seen to take 8 s.)
            // The connection is unaffected.
            #expect(try await client.nameHasOwner(Self.service))
        }
    }

    /// libdbus aborts the process on a negative timeout, and a huge one must not overflow on the way to it.
    @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(-3_600), .nanoseconds(-1)])
    func anExpiredTimeoutFailsAtOnce(_ timeout: Duration) async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let client = fixture.client
            let outcome = try await withTimeout(seconds: 10) {
                await resultOf {
                    try await client.call(
                        destination: Self.service, path: SlowObject.path, interface: SlowObject.interface,
                        member: "Sleep", [.uint32(5_000)], timeout: timeout
                    )
                }
            }
            if case .failure(let error as DBusError) = outcome {
                #expect(error.name == "org.freedesktop.DBus.Error.NoReply")
            } else {
                Issue.record("expected NoReply, got \(outcome)")
            }
        }
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(3_000_000), .milliseconds(Int64(Int32.max) + 1)])
    func aHugeTimeoutWaitsForTheReply(_ timeout: Duration) async throws {
        try await BusFixture.with { fixture in
            let client = fixture.client
            let sum = try await withTimeout(seconds: 10) {
                try await client.call(
                    destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, member: "Add",
                    [.int32(20), .int32(22)], timeout: timeout
                )
            }
            #expect(sum == [.int32(42)])
        }
    }

    /// A reply that arrives after its call timed out is dropped, not handed to a later call.
    @Test func aLateReplyIsIgnored() async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let client = fixture.client
            await #expect(throws: DBusError.self) {
                try await withTimeout(seconds: 10) {
                    try await client.call(
                        destination: Self.service, path: SlowObject.path, interface: SlowObject.interface,
                        member: "Sleep", [.uint32(400)], timeout: .milliseconds(100)
                    )
                }
            }
            #expect(await waitUntil(within: 5) { await events.values.contains("done \(client.uniqueName)") })
            let sum = try await withTimeout(seconds: 10) {
                try await client.call(
                    destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, member: "Add",
                    [.int32(2), .int32(3)]
                )
            }
            #expect(sum == [.int32(5)])
        }
    }

    @Test func cancellingAPendingCallThrowsPromptly() async throws {
        try await BusFixture.with { fixture in
            let events = Recorder<String>()
            try await fixture.objects.export([SlowObject.exported(events: events)], at: SlowObject.path)
            let client = fixture.client
            let pending = Task {
                try await client.call(
                    destination: Self.service, path: SlowObject.path, interface: SlowObject.interface,
                    member: "Sleep", [.uint32(5_000)], timeout: .seconds(60)
                )
            }
            #expect(await waitUntil(within: 5) { await events.values.contains("call \(client.uniqueName)") })
            pending.cancel()
            let outcome = try await withTimeout(seconds: 15) { await pending.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
            // A CancellationError, not the handler's answer (it comes after 10 s): cancelling ended the wait. (No
            // bound on the time it took: under a loaded machine's scheduling it was seen to take 10 s.)

            // A task cancelled before calling does not send anything.
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.call(
                    destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, member: "Add",
                    [.int32(1), .int32(1)]
                )
            }
            let early = try await withTimeout(seconds: 5) { await cancelled.result }
            #expect(throws: CancellationError.self) { try early.get() }

            // The connection still works.
            #expect(try await client.nameHasOwner(Self.service))
        }
    }
}

/// An object whose `Sleep(u milliseconds)` answers only after that long, recording "call <sender>" when it
/// starts and "done <sender>" when it finishes.
enum SlowObject {
    static let path: ObjectPath = "/org/example/Slow"
    static let interface = "org.example.Slow"
    static let description = DBusInterfaceDescription(
        name: interface, methods: [.init("Sleep", inputs: [.init("milliseconds", .uint32)])]
    )

    static func exported(events: Recorder<String>) -> DBusExportedInterface {
        DBusExportedInterface(
            description,
            methods: [
                "Sleep": { call in
                    await events.append("call \(call.sender)")
                    try await Task.sleep(for: .milliseconds(Int(call.arguments[0].uint32Value ?? 0)))
                    await events.append("done \(call.sender)")
                    return []
                }
            ]
        )
    }
}
