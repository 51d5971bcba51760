import DBusKit
import Foundation
import HaulTestSupport
import Testing

@Suite("Signals: PropertiesChanged, ObjectManager and custom signals", .timeLimit(.minutes(3)))
struct SignalTests {
    static let propertiesChanged = MatchRule(
        kind: .signal, path: BusFixture.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"
    )
    static let objectManagerSignals = MatchRule(
        kind: .signal, path: "/org/example", interface: "org.freedesktop.DBus.ObjectManager"
    )

    /// The changed properties of a `PropertiesChanged` signal, checking its shape.
    static func changes(_ message: DBusMessage) -> [String: DBusValue]? {
        guard message.member == "PropertiesChanged", message.signature == "sa{sv}as",
            message.body[0] == .string(BusFixture.interface), message.body[2] == .strings([])
        else { return nil }
        return message.body[1].stringDictionary?.mapValues(\.unwrapped)
    }

    @Test func propertiesChangedReachesSubscribersAndDBusMonitor() async throws {
        try await BusFixture.with { fixture in
            let changes = try await fixture.client.messages(matching: [Self.propertiesChanged])

            // dbus-monitor turns its connection into a monitor, which drops its unique name: once that name is
            // seen leaving, the monitor is in place and will see every later message.
            let departures = try await fixture.client.vanishedPeers()
            let monitor = try Command.start(
                "dbus-monitor",
                ["--address", fixture.bus.address, "type='signal',interface='org.freedesktop.DBus.Properties'"],
                environment: fixture.bus.environment
            )
            defer { if monitor.isRunning { kill(monitor.pid, SIGTERM) } }
            _ = try await withTimeout(seconds: 10) {
                for await name in departures { return name }
                throw TestSupportError("no peer left the bus")
            }

            try await fixture.objects.updateProperties(
                ["Counter": .uint32(5), "Name": .string("renamed")], interface: BusFixture.interface,
                at: BusFixture.path
            )
            // Unchanged values: no signal at all, then a signal naming only what really changed.
            try await fixture.objects.updateProperties(
                ["Counter": .uint32(5)], interface: BusFixture.interface, at: BusFixture.path
            )
            try await fixture.objects.updateProperties(
                ["Counter": .uint32(5), "Limit": .int32(11)], interface: BusFixture.interface, at: BusFixture.path
            )
            // A last change marks the end: anything wrongly sent before it arrives before it.
            try await fixture.objects.updateProperties(
                ["Counter": .uint32(6)], interface: BusFixture.interface, at: BusFixture.path
            )

            let received = try await changes.next(3, within: 10).map(Self.changes)
            #expect(
                received == [
                    ["Counter": .uint32(5), "Name": .string("renamed")], ["Limit": .int32(11)], ["Counter": .uint32(6)],
                ]
            )
            #expect(
                await fixture.objects.property("Counter", interface: BusFixture.interface, at: BusFixture.path)
                    == .uint32(6)
            )

            // Stopping the bus makes dbus-monitor print what it has received, then exit on the disconnection: a
            // deterministic end, unlike a SIGTERM that may land before it has read the last signal.
            fixture.bus.stop()
            let output = try await withTimeout(seconds: 10) { await Command.finish(monitor) }.stdout
            let signals = DBusMonitorOutput(output).messages.filter { $0.header.contains("member=PropertiesChanged") }
            #expect(signals.count == 3, "\(output)")
            guard signals.count == 3 else { return }
            #expect(signals.allSatisfy { $0.header.contains("path=/org/example/Test;") })
            #expect(signals.allSatisfy { $0.header.contains("sender=\(fixture.server.uniqueName)") })
            #expect(signals[0].body.contains("string \"Counter\""))
            #expect(signals[0].body.contains("uint32 5"))
            #expect(signals[0].body.contains("string \"renamed\""))
            #expect(signals[1].body.contains("string \"Limit\""))
            #expect(signals[1].body.contains("int32 11"))
            #expect(!signals[1].body.contains("Counter"))
            #expect(signals[2].body.contains("uint32 6"))
        }
    }

    @Test func setThroughTheBusEmitsOncePerRealChange() async throws {
        try await BusFixture.with { fixture in
            let changes = try await fixture.client.messages(matching: [Self.propertiesChanged])
            let service = InteropTests.service
            try await fixture.client.setProperty(
                destination: service, path: BusFixture.path, interface: BusFixture.interface, name: "Limit",
                value: .int32(42)
            )
            // The same value again, and refused values, change nothing and announce nothing.
            try await fixture.client.setProperty(
                destination: service, path: BusFixture.path, interface: BusFixture.interface, name: "Limit",
                value: .int32(42)
            )
            await #expect(throws: DBusError.self) {
                try await fixture.client.setProperty(
                    destination: service, path: BusFixture.path, interface: BusFixture.interface, name: "Limit",
                    value: .int32(-5)
                )
            }
            await #expect(throws: DBusError.self) {
                try await fixture.client.setProperty(
                    destination: service, path: BusFixture.path, interface: BusFixture.interface, name: "Name",
                    value: .string("x")
                )
            }
            let counter = try await fixture.dbusSend(
                [
                    "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                    "string:Counter", "variant:uint32:9",
                ]
            )
            #expect(counter.status == 0, "\(counter.stderr)")

            let received = try await changes.next(2, within: 10)
            #expect(received.map(Self.changes) == [["Limit": .int32(42)], ["Counter": .uint32(9)]])
            #expect(received.allSatisfy { $0.sender == fixture.server.uniqueName && $0.path == BusFixture.path })

            let all = try await fixture.client.allProperties(
                destination: service, path: BusFixture.path, interface: BusFixture.interface
            )
            #expect(all == ["Counter": .uint32(9), "Name": .string("tester"), "Limit": .int32(42)])
        }
    }

    /// An update with a property of the wrong type, or one the interface lacks, is refused whole: nothing of it is
    /// stored or sent, whichever of its properties comes first.
    @Test func anUpdateWithOneWrongPropertyChangesNothing() async throws {
        try await BusFixture.with { fixture in
            let changes = try await fixture.client.messages(matching: [Self.propertiesChanged])
            let counter = {
                await fixture.objects.property("Counter", interface: BusFixture.interface, at: BusFixture.path)
            }
            let before = await counter()
            for wrong: [String: DBusValue] in [["Name": .uint32(1)], ["Missing": .uint32(1)]] {
                await #expect(throws: DBusError.self) {
                    try await fixture.objects.updateProperties(
                        wrong.merging(["Counter": .uint32(41), "Limit": .int32(12)]) { $1 },
                        interface: BusFixture.interface, at: BusFixture.path
                    )
                }
                #expect(await counter() == before)
            }
            // The next good update is the first signal.
            try await fixture.objects.updateProperties(
                ["Counter": .uint32(42)], interface: BusFixture.interface, at: BusFixture.path
            )
            #expect(try await changes.next(1, within: 10).map(Self.changes) == [["Counter": .uint32(42)]])
        }
    }

    /// `updateAllProperties` takes the values in the order the interface declares them (Counter, Name, Limit), not
    /// the name order of the layout, and sends those that changed in name order; one of the wrong type, or a wrong
    /// count, is refused whole.
    @Test func anUpdateOfEveryPropertyGoesByTheDeclaredOrder() async throws {
        try await BusFixture.with { fixture in
            let changes = try await fixture.client.messages(matching: [Self.propertiesChanged])
            let update = { (values: [DBusValue]) in
                try await fixture.objects.updateAllProperties(
                    values, interface: BusFixture.interface, at: BusFixture.path
                )
            }
            for wrong: [DBusValue] in [[.uint32(5), .int32(1), .int32(11)], [.uint32(5), .string("tester")]] {
                await #expect(throws: DBusError.self) { try await update(wrong) }
            }
            try await update([.uint32(5), .string("tester"), .int32(11)])
            let signal = try #require(try await changes.next(1, within: 10).first)
            #expect(Self.changes(signal) == ["Counter": .uint32(5), "Limit": .int32(11)])
            guard case .dictionary(_, _, let entries) = signal.body[1] else { Issue.record("no a{sv}"); return }
            #expect(entries.map(\.key) == [.string("Counter"), .string("Limit")])
            let all = try await fixture.client.allProperties(
                destination: fixture.server.uniqueName, path: BusFixture.path, interface: BusFixture.interface
            )
            #expect(all == ["Counter": .uint32(5), "Name": .string("tester"), "Limit": .int32(11)])
        }
    }

    /// `apply` carries out every change in order; one that fails is reported by its position and leaves the others.
    @Test func applyCarriesOutEveryChangeInOrderAndReportsTheOnesThatFail() async throws {
        try await BusFixture.with { fixture in
            let signals = try await fixture.client.messages(
                matching: [Self.propertiesChanged, MatchRule(kind: .signal, interface: BusFixture.interface)]
            )
            let failures = await fixture.objects.apply([
                .properties(["Counter": .uint32(1)], interface: BusFixture.interface, at: BusFixture.path),
                .signal(path: BusFixture.path, interface: BusFixture.interface, member: "Tock", []),
                .signal(path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(2)]),
                .allProperties(
                    [.uint32(3), .string("tester"), .int32(10)], interface: BusFixture.interface, at: BusFixture.path
                ),
            ])
            #expect(failures.map(\.index) == [1])
            #expect(failures.first?.error is DBusError)
            let received = try await signals.next(3, within: 10)
            #expect(received.map(\.member) == ["PropertiesChanged", "Tick", "PropertiesChanged"])
            #expect(received.first.flatMap(Self.changes) == ["Counter": .uint32(1)])
            #expect(received.last.flatMap(Self.changes) == ["Counter": .uint32(3)])
        }
    }

    /// `emittedSignals()` hands the program every signal the server emits, in order, with the body and header a client
    /// on the bus receives: those of one `apply(_:)` together, the others alone.
    @Test func emittedSignalsAreWhatTheBusCarries() async throws {
        try await BusFixture.with { fixture in
            let onBus = try await fixture.client.messages(
                matching: [Self.objectManagerSignals, Self.propertiesChanged, MatchRule(kind: .signal, member: "Tick")]
            )
            let inProcess = await fixture.objects.emittedSignals()
            let second: ObjectPath = "/org/example/Second"
            var exported = BusFixture.exported()
            exported.properties["Name"] = .string("second")
            try await fixture.objects.export([exported], at: second)
            let failures = await fixture.objects.apply([
                .properties(
                    ["Counter": .uint32(3), "Name": .string("renamed")], interface: BusFixture.interface,
                    at: BusFixture.path
                ),
                .signal(path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(7)]),
            ])
            #expect(failures.isEmpty)
            try await fixture.objects.unexport(second)

            let received = try await onBus.next(4, within: 10)
            let batches = try await inProcess.next(3, within: 10)
            #expect(batches.map(\.count) == [1, 2, 1])
            let heard = batches.flatMap { $0 }
            #expect(received.map(\.member) == ["InterfacesAdded", "PropertiesChanged", "Tick", "InterfacesRemoved"])
            #expect(heard.map(\.member) == received.map(\.member))
            #expect(heard.map(\.path) == received.map(\.path))
            #expect(heard.map(\.interface) == received.map(\.interface))
            #expect(heard.map(\.body) == received.map(\.body))
        }
    }

    @Test func objectManagerAnnouncesAddedAndRemovedObjects() async throws {
        try await BusFixture.with { fixture in
            let announcements = try await fixture.client.messages(matching: [Self.objectManagerSignals])
            let second: ObjectPath = "/org/example/Second"
            var exported = BusFixture.exported()
            exported.properties["Name"] = .string("second")
            try await fixture.objects.export([exported], at: second)
            // An object outside the manager's subtree is neither announced nor listed.
            try await fixture.objects.export([BusFixture.exported()], at: "/elsewhere/Third")
            try await fixture.objects.unexport(second)

            let received = try await announcements.next(2, within: 10)
            #expect(received.map(\.member) == ["InterfacesAdded", "InterfacesRemoved"])
            #expect(received.allSatisfy { $0.path == "/org/example" && $0.sender == fixture.server.uniqueName })

            let added = received[0]
            #expect(added.signature == "oa{sa{sv}}")
            #expect(added.body.first == .objectPath(second))
            // The exported interfaces only: the standard ones every object has carry no properties (as GDBus lists).
            let interfaces = try #require(added.body.last?.stringDictionary)
            #expect(Set(interfaces.keys) == [BusFixture.interface])
            let properties = interfaces[BusFixture.interface]?.stringDictionary?.mapValues(\.unwrapped)
            #expect(properties == ["Counter": .uint32(0), "Name": .string("second"), "Limit": .int32(10)])

            let removed = received[1]
            #expect(removed.signature == "oas")
            #expect(removed.body.first == .objectPath(second))
            #expect(removed.body.last == .strings([BusFixture.interface]))

            // GetManagedObjects lists exactly what is exported below the manager, before and after.
            #expect(try await fixture.managedObjects() == [BusFixture.path])
            try await fixture.objects.export([exported], at: second)
            #expect(try await fixture.managedObjects() == [second, BusFixture.path])
            let objects = try await fixture.client.call(
                destination: InteropTests.service, path: "/org/example",
                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"
            )
            guard case .dictionary(.objectPath, _, let entries)? = objects.first else {
                Issue.record("GetManagedObjects answered \(objects)")
                return
            }
            let secondEntry = entries.first { $0.key == .objectPath(second) }
            let name = secondEntry?.value.stringDictionary?[BusFixture.interface]?.stringDictionary?["Name"]?.unwrapped
            #expect(name == .string("second"))
            // Written straight from the object table, an object's entry is what InterfacesAdded announced for it.
            #expect(secondEntry?.value == added.body.last)

            // An independent client agrees.
            let gdbus = try await fixture.tool(
                "gdbus",
                [
                    "call", "--address", fixture.bus.address, "--dest", InteropTests.service, "--object-path",
                    "/org/example", "--method", "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
                ]
            )
            #expect(gdbus.status == 0, "\(gdbus.stderr)")
            #expect(gdbus.stdout.contains("'/org/example/Second': {"))
            #expect(gdbus.stdout.contains("'/org/example/Test': {"))
            #expect(gdbus.stdout.contains("'Name': <'second'>"))
            #expect(!gdbus.stdout.contains("/elsewhere"))

            let next = try await announcements.next(1, within: 10)
            #expect(next.first?.member == "InterfacesAdded")

            // And once it is gone again.
            try await fixture.objects.unexport(second)
            #expect(try await fixture.managedObjects() == [BusFixture.path])
        }
    }

    /// A subscription to a well-known sender gets that name's owner's signals only, even when another subscription
    /// of the same connection lets everyone's through, and follows the name when it changes hands.
    @Test func aWellKnownSenderMatchesOnlyItsCurrentOwner() async throws {
        try await BusFixture.with { fixture in
            let service = InteropTests.service
            let anyTick = MatchRule(kind: .signal, interface: BusFixture.interface, member: "Tick")
            var serviceTick = anyTick
            serviceTick.sender = service
            var laterTick = anyTick
            laterTick.sender = "org.example.Later"
            let fromService = try await fixture.client.messages(matching: [serviceTick])
            let fromLater = try await fixture.client.messages(matching: [laterTick])
            let fromAnyone = try await fixture.client.messages(matching: [anyTick])
            let impostor = try await DBusConnection.connect(address: fixture.bus.address)
            let heir = try await DBusConnection.connect(address: fixture.bus.address)

            func tick(_ n: UInt32, from connection: DBusConnection) async throws {
                try await connection.send(
                    .signal(path: BusFixture.path, interface: BusFixture.interface, member: "Tick", body: [.uint32(n)])
                )
                // Received before the next is sent, so the client sees them in the order of this test.
                let seen = try await fromAnyone.next(1, within: 10)
                #expect(seen.first?.body == [.uint32(n)])
            }
            try await tick(99, from: impostor)
            try await tick(1, from: fixture.server)
            try await tick(97, from: heir)

            // The name changes hands: its owner leaves and the impostor takes it.
            await fixture.server.close()
            try await waitUntil("\(service) to be released", timeout: .seconds(5)) {
                try await !fixture.client.nameHasOwner(service)
            }
            #expect(try await impostor.requestName(service) == .primaryOwner)
            try await tick(2, from: impostor)
            // A name that had no owner when the subscription began.
            #expect(try await heir.requestName("org.example.Later") == .primaryOwner)
            try await tick(3, from: heir)
            try await tick(96, from: fixture.client)

            let official = try await fromService.next(2, within: 10)
            #expect(official.map(\.body) == [[.uint32(1)], [.uint32(2)]])
            #expect(official.map(\.sender) == [fixture.server.uniqueName, impostor.uniqueName])
            let later = try await fromLater.next(1, within: 10)
            #expect(later.map(\.body) == [[.uint32(3)]])
            await impostor.close()
            await heir.close()
        }
    }

    /// A burst larger than a drain hands over at once (``DBusConnection/routedBatch``) reaches every subscriber whole
    /// and in order, its last part too, and a reply that comes after it is not held up.
    @Test func aBurstOfSignalsReachesEverySubscriberInOrder() async throws {
        try await BusFixture.with { fixture in
            let rule = MatchRule(kind: .signal, interface: BusFixture.interface, member: "Tick")
            let first = try await fixture.client.messages(matching: [rule])
            let second = try await fixture.client.messages(matching: [rule])
            let count = 3 * DBusConnection.routedBatch + 8
            for n in 0..<count {
                let tick = DBusMessage.signal(
                    path: BusFixture.path, interface: BusFixture.interface, member: "Tick", body: [.uint32(UInt32(n))]
                )
                try fixture.server.enqueue(tick)
            }
            let all = try await fixture.client.allProperties(
                destination: fixture.server.uniqueName, path: BusFixture.path, interface: BusFixture.interface
            )
            #expect(all["Name"] == .string("tester"))
            let expected = (0..<count).map { [DBusValue.uint32(UInt32($0))] }
            #expect(try await first.next(count, within: 10).map(\.body) == expected)
            #expect(try await second.next(count, within: 10).map(\.body) == expected)
        }
    }

    @Test func customSignalsAreCheckedAndDelivered() async throws {
        try await BusFixture.with { fixture in
            let ticks = try await fixture.client.messages(
                matching: [MatchRule(kind: .signal, interface: BusFixture.interface, member: "Tick")]
            )
            await #expect(throws: DBusError.self) {
                try await fixture.objects.emitSignal(
                    path: BusFixture.path, interface: BusFixture.interface, member: "Tock"
                )
            }
            await #expect(throws: DBusError.self) {
                try await fixture.objects.emitSignal(
                    path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.int32(1)]
                )
            }
            await #expect(throws: DBusError.self) {
                try await fixture.objects.emitSignal(
                    path: BusFixture.path, interface: BusFixture.interface, member: "Tick"
                )
            }
            await #expect(throws: DBusError.self) {
                try await fixture.objects.emitSignal(
                    path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(1), .uint32(2)]
                )
            }
            // Declared by the interface, but not exported at that path.
            await #expect(throws: DBusError.self) {
                try await fixture.objects.emitSignal(
                    path: "/org/example/Nowhere", interface: BusFixture.interface, member: "Tick", [.uint32(1)]
                )
            }

            try await fixture.objects.emitSignal(
                path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(7)]
            )
            try await fixture.objects.emitSignal(
                path: BusFixture.path, interface: BusFixture.interface, member: "Tick", [.uint32(8)]
            )
            // A signal's header is not checked as it is sent: an interface or signal name that could not be sent is
            // refused when it is exported.
            for (name, signal) in [("org.example.Bad-Name", "Tick"), ("org.example.Other", "Tick.Tock")] {
                var description = BusFixture.description
                description.name = name
                description.signals = [.init(signal, [.init("n", .uint32)])]
                let template = BusFixture.exported()
                let exported = DBusExportedInterface(
                    description, methods: template.methods, properties: template.properties
                )
                await #expect(throws: DBusError.self) {
                    try await fixture.objects.export([exported], at: "/org/example/Bad")
                }
            }
            let received = try await ticks.next(2, within: 10)
            #expect(received.map(\.body) == [[.uint32(7)], [.uint32(8)]])
            #expect(received.allSatisfy { $0.kind == .signal && $0.path == BusFixture.path })
            #expect(received.allSatisfy { $0.sender == fixture.server.uniqueName && $0.signature == "u" })
        }
    }
}

extension BusFixture {
    /// The object paths `GetManagedObjects` lists at `/org/example`, sorted.
    func managedObjects() async throws -> [ObjectPath] {
        let reply = try await client.call(
            destination: server.uniqueName, path: "/org/example", interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects"
        )
        guard reply.count == 1, case .dictionary(.objectPath, _, let entries) = reply[0] else {
            throw TestSupportError("GetManagedObjects answered \(reply)")
        }
        return entries.compactMap(\.key.objectPathValue).sorted()
    }
}

/// `dbus-monitor`'s default output split into messages: a header line, then indented body lines.
struct DBusMonitorOutput {
    struct Message {
        var header: String
        var body: String
    }

    var messages: [Message] = []

    init(_ output: String) {
        for line in output.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.first == " " || line.first == "\t" {
                if !messages.isEmpty { messages[messages.count - 1].body += line + "\n" }
            } else {
                messages.append(Message(header: String(line), body: ""))
            }
        }
    }
}
