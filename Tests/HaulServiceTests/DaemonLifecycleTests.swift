import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct DaemonLifecycleTests {
    @Test func aSecondHauldExitsWithStatus3AndAClearMessage() async throws {
        try await DaemonFixture.with { fixture throws in
            var environment = fixture.bus.environment
            environment["XDG_STATE_HOME"] = fixture.hauld.stateDirectory.path
            let second = try await Command.run(Command.built("hauld"), [], environment: environment)
            #expect(second.status == 3)
            #expect(second.stderr.contains("another hauld already owns \(HaulBus.name)"))
            // The first one is unaffected.
            #expect(try await fixture.indicatorProperty(.state) == .state(.notActive))
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalGivesACleanExit(_ signal: Int32) async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let hauld = try await HauldProcess(bus: bus)
        let result = await hauld.stop(signal: signal)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("hauld stopped"))
    }

    @Test func losingTheBusIsAFailure() async throws {
        let bus = try await PrivateBus()
        let hauld = try await HauldProcess(bus: bus)
        bus.stop()
        let result = await Command.finish(hauld.running)
        #expect(result.status != 0)
        #expect(result.stderr.contains("bus went away"))
    }

    @Test func underTheJournalLinesCarrySyslogPriorities() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        var environment = bus.environment
        environment["JOURNAL_STREAM"] = "8:12345"
        environment["XDG_STATE_HOME"] = bus.directory.appendingPathComponent("state").path
        let running = try Command.start(Command.built("hauld"), ["--log-level", "debug"], environment: environment)
        let probe = try await DBusConnection.connect(address: bus.address)
        try await waitUntil("hauld to take its name", timeout: .seconds(20)) {
            try await probe.nameHasOwner(HaulBus.name)
        }
        await probe.close()
        kill(running.pid, SIGTERM)
        let result = await Command.finish(running)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>hauld is serving \(HaulBus.name)") })
        #expect(lines.allSatisfy { $0.first == "<" })
    }

    @Test func anUnknownLogLevelIsAUsageError() async throws {
        let result = try await Command.run(Command.built("hauld"), ["--log-level", "loud"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown log level"))
    }
}
