import DBusKit
@testable import HaulService
import HaulTestSupport
import Testing

/// `PowerProfileMonitor` against a fake power-profiles-daemon under both its names.
@Suite(.timeLimit(.minutes(3))) struct PowerProfileMonitorTests {
    /// Runs `body` with a monitor following the fake, and what it has reported so far.
    func withMonitor(
        absent: Set<FakeSystemBus.Service> = [], _ body: (FakeSystemBus, Recording<Bool>) async throws -> Void
    ) async throws {
        try await SystemFixture.with(absent: absent) { fixture throws in
            let monitor = PowerProfileMonitor(connection: fixture.connection)
            let powerSaver = Recording.of(monitor.powerSaver)
            let following = Task { await monitor.run() }
            defer { following.cancel() }
            try await body(fixture.system, powerSaver)
        }
    }

    @Test func followsTheActiveProfile() async throws {
        try await withMonitor { system, powerSaver throws in
            #expect(await powerSaver.first(1) == [false])
            try await system.setActiveProfile("power-saver")
            #expect(await powerSaver.first(2) == [false, true])
            try await system.setActiveProfile("performance")
            #expect(await powerSaver.first(3) == [false, true, false])
            // The older name does not count while the current one is there.
            try await system.setActiveProfile("power-saver", on: .hadessPowerProfiles)
            try await system.setActiveProfile("balanced")
            try await system.setActiveProfile("power-saver")
            #expect(await powerSaver.first(4) == [false, true, false, true])
            #expect(await powerSaver.elements.count == 4)
        }
    }

    @Test func theOlderNameAloneAndEitherComingAndGoing() async throws {
        try await withMonitor(absent: [.powerProfiles]) { system, powerSaver throws in
            #expect(await powerSaver.first(1) == [false])
            try await system.setActiveProfile("power-saver", on: .hadessPowerProfiles)
            #expect(await powerSaver.first(2) == [false, true])
            // The current name comes, at balanced: it counts.
            try await system.setPresent(.powerProfiles, true)
            #expect(await powerSaver.first(3) == [false, true, false])
            // It goes: the older one speaks again.
            try await system.setPresent(.powerProfiles, false)
            #expect(await powerSaver.first(4) == [false, true, false, true])
            try await system.setPresent(.hadessPowerProfiles, false)
            #expect(await powerSaver.first(5) == [false, true, false, true, false])
            // Back with the profile it had.
            try await system.setPresent(.hadessPowerProfiles, true)
            #expect(await powerSaver.first(6) == [false, true, false, true, false, true])
        }
    }

    @Test func neitherNameAtTheStart() async throws {
        try await withMonitor(absent: [.powerProfiles, .hadessPowerProfiles]) { system, powerSaver throws in
            #expect(await powerSaver.first(1) == [false])
            try await system.setActiveProfile("power-saver")
            try await system.setPresent(.powerProfiles, true)
            #expect(await powerSaver.first(2) == [false, true])
        }
    }

    @Test func junkIsNoPowerSaver() async throws {
        try await withMonitor { system, powerSaver throws in
            #expect(await powerSaver.first(1) == [false])
            // Each change waits for its answer: one that comes while the monitor reads all properties anew (after
            // ActiveProfile is invalidated) is in what it reads, and the state before is never seen.
            try await system.setActiveProfile("power-saver")
            #expect(await powerSaver.first(2).last == true)
            try await system.setProperties(.powerProfiles, ["ActiveProfile": .uint32(0)])
            #expect(await powerSaver.first(3).last == false)
            try await system.setActiveProfile("power-saver")
            #expect(await powerSaver.first(4).last == true)
            try await system.setProperties(.powerProfiles, [:], removing: ["ActiveProfile"])
            #expect(await powerSaver.first(5).last == false)
            try await system.setActiveProfile("power-saver")
            #expect(await powerSaver.first(6).last == true)
            try await system.setProperties(.powerProfiles, ["ActiveProfile": .strings(["power-saver"])])
            #expect(await powerSaver.first(7) == [false, true, false, true, false, true, false])
            // GetAll answering junk, and then a service that dies mid-call: no power saver, and no trap.
            try await system.setReply(.powerProfiles, member: "GetAll", .junk)
            try await system.setPresent(.powerProfiles, false)
            try await system.setActiveProfile("power-saver", on: .hadessPowerProfiles)
            #expect(await powerSaver.first(8).last == true)
            try await system.setPresent(.powerProfiles, true)
            #expect(await powerSaver.first(9).last == false)
            try await system.setReply(.hadessPowerProfiles, member: "GetAll", .die)
            try await system.setPresent(.powerProfiles, false)
            #expect(await powerSaver.first(10).last == true)
            try await system.setPresent(.hadessPowerProfiles, false)
            #expect(await powerSaver.first(11).last == false)
            // It comes, leaves when asked for its properties, comes again and answers.
            try await system.setPresent(.hadessPowerProfiles, true)
            try await waitUntil("!system.isPresent(.hadessPowerProfiles)") { try await !system.isPresent(.hadessPowerProfiles) }
            try await system.setReply(.hadessPowerProfiles, member: "GetAll", .normal)
            try await system.setPresent(.hadessPowerProfiles, true)
            #expect(await powerSaver.first(12).last == true)
            #expect(await powerSaver.elements.count == 12)
        }
    }

    @Test func endsWhenTheConnectionCloses() async throws {
        try await SystemFixture.with { fixture throws in
            try await fixture.system.setActiveProfile("power-saver")
            let monitor = PowerProfileMonitor(connection: fixture.connection)
            let powerSaver = Recording.of(monitor.powerSaver)
            let following = Task { await monitor.run() }
            #expect(await powerSaver.first(1) == [true])
            await fixture.connection.close()
            await following.value
            #expect(await powerSaver.finished())
            #expect(await powerSaver.elements == [true, false])
        }
    }

    @Test func profileOfTheFirstServicePresent() {
        let saver: [String: DBusValue] = ["ActiveProfile": .string("power-saver")]
        let balanced: [String: DBusValue] = ["ActiveProfile": .string("balanced")]
        #expect(PowerProfileMonitor.isPowerSaver([saver, balanced]))
        #expect(!PowerProfileMonitor.isPowerSaver([balanced, saver]))
        #expect(PowerProfileMonitor.isPowerSaver([nil, saver]))
        #expect(!PowerProfileMonitor.isPowerSaver([[:], saver]))
        #expect(!PowerProfileMonitor.isPowerSaver([nil, nil]))
        #expect(!PowerProfileMonitor.isPowerSaver([["ActiveProfile": .string("Power-Saver")]]))
    }
}
