import DBusKit
import HaulCore
@testable import HaulService
import HaulTestSupport
import Testing

/// `NetworkMonitor` against a fake NetworkManager on a private bus that plays the system bus.
@Suite(.timeLimit(.minutes(3))) struct NetworkMonitorTests {
    typealias Reading = NetworkMonitor.Reading

    /// Runs `body` with a monitor following the fake, and what it has read so far.
    func withMonitor(
        absent: Set<FakeSystemBus.Service> = [], _ body: (SystemFixture, Recording<Reading>) async throws -> Void
    ) async throws {
        try await SystemFixture.with(absent: absent) { fixture throws in
            let monitor = NetworkMonitor(connection: fixture.connection)
            let readings = Recording.of(monitor.readings)
            let following = Task { await monitor.run() }
            defer { following.cancel() }
            try await body(fixture, readings)
        }
    }

    @Test func followsConnectivityStateAndMetered() async throws {
        try await withMonitor { fixture, readings throws in
            #expect(await readings.first(1) == [Reading(state: .online, metered: false)])
            try await fixture.system.setNetwork(connectivity: 1)
            try await fixture.system.setNetwork(connectivity: 2)
            // Connectivity unknown: State decides (50, connected-local, is limited).
            try await fixture.system.setNetwork(connectivity: 0, state: 50)
            try await fixture.system.setNetwork(metered: 1)
            // Guess-yes is metered too: the same reading, not reported again.
            try await fixture.system.setNetwork(metered: 3)
            try await fixture.system.setNetwork(connectivity: 4, metered: 2)
            #expect(
                await readings.first(6) == [
                    Reading(state: .online, metered: false),
                    Reading(state: .offline, metered: false),
                    Reading(state: .portal, metered: false),
                    Reading(state: .limited, metered: false),
                    Reading(state: .limited, metered: true),
                    Reading(state: .online, metered: false),
                ]
            )
        }
    }

    @Test func networkManagerComingAndGoing() async throws {
        try await withMonitor(absent: [.networkManager]) { fixture, readings throws in
            #expect(await readings.first(1) == [.absent])
            try await fixture.system.setPresent(.networkManager, true)
            #expect(await readings.first(2).last == Reading(state: .online, metered: false))
            try await fixture.system.setNetwork(connectivity: 1, metered: 1)
            #expect(await readings.first(3).last == Reading(state: .offline, metered: true))
            try await fixture.system.setPresent(.networkManager, false)
            #expect(await readings.first(4).last == .absent)
            // Back with what it had: read anew when it comes.
            try await fixture.system.setPresent(.networkManager, true)
            #expect(await readings.first(5).last == Reading(state: .offline, metered: true))
            #expect(await readings.elements.count == 5)
        }
    }

    @Test func propertiesOfTheWrongTypeOrMissingCountAsUnknown() async throws {
        try await withMonitor { fixture, readings throws in
            #expect(await readings.first(1) == [Reading(state: .online, metered: false)])
            let system = fixture.system
            // Each change waits for its reading: a change that comes while the monitor reads all properties anew is
            // in what it reads, and the state before is never seen.
            // A Connectivity that is no `u`: State decides.
            try await system.setProperties(.networkManager, ["Connectivity": .string("full"), "State": .uint32(20)])
            #expect(await readings.first(2).last == Reading(state: .offline, metered: false))
            // A variant inside the variant is read through; a Metered of type `i` is not metered.
            try await system.setProperties(.networkManager, ["State": .variant(.uint32(70)), "Metered": .int32(1)])
            #expect(await readings.first(3).last == Reading(state: .online, metered: false))
            // Neither Connectivity nor State: nothing is known.
            try await system.setProperties(.networkManager, ["State": .string("junk")])
            #expect(await readings.first(4).last == Reading(state: .unknown, metered: false))
            // Invalidated properties are read anew.
            try await system.setProperties(.networkManager, ["Connectivity": .uint32(3)], removing: ["State"])
            #expect(await readings.first(5).last == Reading(state: .limited, metered: false))
            try await system.setProperties(.networkManager, [:], removing: ["Connectivity", "Metered"])
            #expect(await readings.first(6).last == Reading(state: .unknown, metered: false))
            try await system.setNetwork(connectivity: 4, state: 70, metered: 1)
            #expect(await readings.first(7).last == Reading(state: .online, metered: true))
            #expect(await readings.elements.count == 7)
        }
    }

    /// A NetworkManager that is there but says nothing usable reads as none (`.absent`): the same reading.
    @Test func junkAnswersAndAServiceThatDiesMidCall() async throws {
        try await withMonitor(absent: [.networkManager]) { fixture, readings throws in
            let system = fixture.system
            #expect(await readings.first(1) == [.absent])
            // GetAll answers a string: present, nothing known; changes count after that.
            try await system.setReply(.networkManager, member: "GetAll", .junk)
            try await system.setPresent(.networkManager, true)
            try await system.setNetwork(connectivity: 1)
            #expect(await readings.first(2).last == Reading(state: .offline, metered: false))
            try await system.setPresent(.networkManager, false)
            #expect(await readings.first(3).last == .absent)
            // GetAll fails: the same.
            try await system.setReply(.networkManager, member: "GetAll", .error)
            try await system.setPresent(.networkManager, true)
            try await system.setNetwork(connectivity: 3)
            #expect(await readings.first(4).last == Reading(state: .limited, metered: false))
            try await system.setPresent(.networkManager, false)
            #expect(await readings.first(5).last == .absent)
            // It leaves the bus instead of answering GetAll; then comes back and answers.
            try await system.setReply(.networkManager, member: "GetAll", .die)
            try await system.setPresent(.networkManager, true)
            try await waitUntil("!system.isPresent(.networkManager)") { try await !system.isPresent(.networkManager) }
            try await system.setReply(.networkManager, member: "GetAll", .normal)
            try await system.setNetwork(connectivity: 2)
            try await system.setPresent(.networkManager, true)
            #expect(await readings.first(6).last == Reading(state: .portal, metered: false))
            #expect(await readings.elements.count == 6)
            #expect(try await system.calls(.networkManager, member: "GetAll") == 4)
        }
    }

    @Test func signalsFromAnotherPeerAreIgnored() async throws {
        try await withMonitor { fixture, readings throws in
            #expect(await readings.first(1) == [Reading(state: .online, metered: false)])
            let impostor = try await fixture.system.connect()
            try await impostor.send(
                .signal(
                    path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged",
                    body: [
                        .string("org.freedesktop.NetworkManager"), .vardict(["Connectivity": .uint32(1)]),
                        .strings([]),
                    ]
                )
            )
            // The bus handles a connection's messages in order: once it has answered, the signal has gone its way.
            _ = try await impostor.nameHasOwner("org.freedesktop.NetworkManager")
            try await fixture.system.setNetwork(metered: 1)
            #expect(await readings.first(2) == [
                Reading(state: .online, metered: false), Reading(state: .online, metered: true),
            ])
            await impostor.close()
        }
    }

    @Test func endsAbsentWhenTheConnectionCloses() async throws {
        try await SystemFixture.with { fixture throws in
            let monitor = NetworkMonitor(connection: fixture.connection)
            let readings = Recording.of(monitor.readings)
            let following = Task { await monitor.run() }
            try await fixture.system.setNetwork(connectivity: 1)
            let offline = Reading(state: .offline, metered: false)
            #expect(await readings.elements { $0.last == offline }.last == offline)
            await fixture.connection.close()
            await following.value
            #expect(await readings.finished())
            #expect(await readings.elements.last == .absent)
        }
    }

    @Test(arguments: [
        // Connectivity decides when known.
        (["Connectivity": DBusValue.uint32(1), "State": .uint32(70)], NetworkState.offline),
        (["Connectivity": .uint32(2), "State": .uint32(70)], .portal),
        (["Connectivity": .uint32(3), "State": .uint32(70)], .limited),
        (["Connectivity": .uint32(4), "State": .uint32(20)], .online),
        (["Connectivity": .uint32(4)], .online),
        // Unknown (0) or unheard of: State decides.
        (["Connectivity": .uint32(0), "State": .uint32(70)], .online),
        (["Connectivity": .uint32(9), "State": .uint32(60)], .limited),
        (["State": .uint32(40)], .offline),
        // Neither: nothing is known.
        (["Connectivity": .uint32(0)], .unknown),
        (["Connectivity": .string("4"), "State": .boolean(true)], .unknown),
        ([:], .unknown),
    ])
    func stateFromProperties(properties: [String: DBusValue], state: NetworkState) {
        #expect(NetworkMonitor.reading(properties).state == state)
    }

    @Test func meteredFromProperties() {
        for (value, metered) in [(0, false), (1, true), (2, false), (3, true), (4, false), (99, false)] {
            #expect(NetworkMonitor.reading(["Metered": .uint32(UInt32(value))]).metered == metered)
        }
        #expect(!NetworkMonitor.reading(["Metered": .string("yes")]).metered)
        #expect(NetworkMonitor.reading(nil) == .absent)
    }
}
