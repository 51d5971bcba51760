import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// hauld following the network and power on a fake system bus, with a host that is not loopback (a network
/// namespace): tasks wait with their reason and continue by themselves.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SystemConditionsBusTests {
    static func with(
        _ body: (TransferFixture, FakeSystemBus, NetworkNamespaceHost) async throws -> Void
    ) async throws {
        let system = try await FakeSystemBus.start()
        defer { system.stop() }
        try await system.setNetwork(connectivity: 4, state: 70, metered: 2)
        let host = try await NetworkNamespaceHost()
        defer { host.stop() }
        try await TransferFixture.with(environment: system.environment) { f throws in
            try await body(f, system, host)
        }
    }

    static func download(
        _ f: TransferFixture, _ url: String, to name: String, options: [DownloadOption: DBusValue] = [:]
    ) async throws -> ObjectPath {
        let reply = try await f.managerCall(
            .downloadWithOptions, [.string(url), .string(f.file(name)), .vardict(options.byName)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    static func manager(_ f: TransferFixture, _ property: ManagerProperty) async throws -> DBusValue {
        try await f.calls.property(property)
    }

    static func waitForQueue(_ f: TransferFixture, _ task: ObjectPath, _ reason: WaitingForName) async throws {
        try await waitUntil("\(task) queued for \(reason.rawValue)") {
            let state = try await f.property(task, .state)
            let waiting = try await f.property(task, .waitingFor)
            return state == .state(.queued) && waiting == .string(reason.rawValue)
        }
    }

    static func expectComplete(_ f: TransferFixture, _ task: ObjectPath, _ name: String, seed: Int) async throws {
        try await f.wait(task, until: .completed)
        #expect(try await f.errorName(task) == "")
        #expect(try await f.sha256(of: name) == (try await TestHTTPServer.sha256OfGenerated(size: 262_144, seed: seed)))
    }

    /// Offline: a task to another host waits for the network, spending nothing, and continues by itself once online;
    /// a loopback task never waits.
    @Test func offlineTasksWaitForTheNetworkAndContinueByThemselves() async throws {
        try await Self.with { f, system, host throws in
            try await system.setNetwork(connectivity: 1)
            try await waitUntil("NetworkState offline") { try await Self.manager(f, .networkState) == .string(NetworkStateName.offline.rawValue) }
            let remote = try await Self.download(f, host.server.url("/gen/256k?seed=61"), to: "remote.bin")
            let local = try await f.download("/gen/256k?seed=62", to: "local.bin")
            try await Self.waitForQueue(f, remote, .network)
            try await Self.expectComplete(f, local, "local.bin", seed: 62)
            #expect(try await f.property(remote, .state) == .state(.queued))
            try await system.setNetwork(connectivity: 4)
            try await Self.expectComplete(f, remote, "remote.bin", seed: 61)
            #expect(try await Self.manager(f, .networkState) == .string(NetworkStateName.online.rawValue))
        }
    }

    /// Behind a captive portal, nothing is fetched from the host: the task waits (`network`) without a request
    /// reaching the server, so no login page can end up in the file; once the portal is passed it continues.
    @Test func aCaptivePortalHoldsTasksWithoutARequest() async throws {
        try await Self.with { f, system, host throws in
            try await system.setNetwork(connectivity: 2)
            try await waitUntil("NetworkState portal") {
                try await Self.manager(f, .networkState) == .string(NetworkStateName.portal.rawValue)
            }
            let query = "/gen/256k?seed=66"
            let remote = try await Self.download(f, host.server.url(query), to: "portal.bin")
            try await Self.waitForQueue(f, remote, .network)
            #expect(try await host.server.stats().requests(query) == 0, "a request went out behind the portal")
            try await system.setNetwork(connectivity: 4)
            try await Self.expectComplete(f, remote, "portal.bin", seed: 66)
            #expect(try await host.server.stats().requests(query) == 1)
        }
    }

    /// Metered: a background task waits for an unmetered network, a foreground one (or one allowed) does not.
    @Test func aMeteredNetworkHoldsBackgroundTasksOnly() async throws {
        try await Self.with { f, system, host throws in
            try await system.setNetwork(metered: 1)
            try await waitUntil("Metered") { try await Self.manager(f, .metered) == .boolean(true) }
            let status = try await Command.run(
                Command.built("haul"), ["status", "--json"], environment: f.daemon.bus.environment
            )
            let shown = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(shown?["network_state"] as? String == NetworkStateName.online.rawValue)
            #expect(shown?["metered"] as? Bool == true && shown?["power_saver"] as? Bool == false)
            let background = try await Self.download(
                f, host.server.url("/gen/256k?seed=63"), to: "background.bin", options: [.priority: .string(TaskPriorityName.background.rawValue)]
            )
            let foreground = try await Self.download(f, host.server.url("/gen/256k?seed=64"), to: "foreground.bin")
            try await Self.waitForQueue(f, background, .unmetered)
            try await Self.expectComplete(f, foreground, "foreground.bin", seed: 64)
            #expect(try await f.property(background, .state) == .state(.queued))
            try await system.setNetwork(metered: 2)
            try await Self.expectComplete(f, background, "background.bin", seed: 63)
        }
    }

    /// Power-saver: background tasks wait for it to end.
    @Test func powerSaverHoldsBackgroundTasks() async throws {
        try await Self.with { f, system, host throws in
            try await system.setActiveProfile("power-saver")
            try await waitUntil("PowerSaver") { try await Self.manager(f, .powerSaver) == .boolean(true) }
            let background = try await Self.download(
                f, host.server.url("/gen/256k?seed=65"), to: "saver.bin", options: [.priority: .string(TaskPriorityName.background.rawValue)]
            )
            try await Self.waitForQueue(f, background, .power)
            try await system.setActiveProfile("balanced")
            try await Self.expectComplete(f, background, "saver.bin", seed: 65)
        }
    }

    /// Without NetworkManager and power-profiles-daemon, nothing waits: hauld behaves as without a system bus.
    @Test func withoutTheServicesNothingWaits() async throws {
        let system = try await FakeSystemBus.start(absent: [.networkManager, .powerProfiles, .hadessPowerProfiles])
        defer { system.stop() }
        let host = try await NetworkNamespaceHost()
        defer { host.stop() }
        try await TransferFixture.with(environment: system.environment) { f throws in
            #expect(try await Self.manager(f, .networkState) == .string(NetworkStateName.unknown.rawValue))
            let task = try await Self.download(
                f, host.server.url("/gen/256k?seed=66"), to: "plain.bin", options: [.priority: .string(TaskPriorityName.background.rawValue)]
            )
            try await Self.expectComplete(f, task, "plain.bin", seed: 66)
        }
    }

    /// A sleep cycle: the delay inhibitor is held while the transfer runs; PrepareForSleep(true) stops it (queued,
    /// `sleep`) and then lets the inhibitor go; PrepareForSleep(false) takes a new one and the transfer continues
    /// with a Range to a byte-exact file.
    @Test func aSleepCycleStopsAndContinuesTheTransfer() async throws {
        try await Self.with { f, system, host throws in
            // The first answer pauses for good after 300 000 bytes: the sleep finds the transfer running, however loaded
            // the machine; the one after the wake-up does not pause.
            let target = "/gen/1m?seed=67&throttle=262144&stall-after=300000"
            let task = try await Self.download(f, host.server.url(target), to: "sleep.bin")
            try await f.wait(task, received: 1)
            let delay = { @Sendable (inhibitors: [FakeSystemBus.Inhibitor]) in
                inhibitors.filter { $0.mode == "delay" && $0.what.contains("sleep") }
            }
            try await waitUntil("a delay inhibitor held") { delay(try await system.inhibitors()).contains { !$0.released } }
            try await system.emitPrepareForSleep(true)
            try await Self.waitForQueue(f, task, .sleep)
            try await waitUntil("the delay inhibitor released") { delay(try await system.inhibitors()).allSatisfy(\.released) }
            try await system.emitPrepareForSleep(false)
            try await waitUntil("a new delay inhibitor") {
                let held = delay(try await system.inhibitors())
                return held.count >= 2 && held.contains { !$0.released }
            }
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "sleep.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 67)))
            let stats = try await host.server.stats()
            let ranges = stats.ranges(target)
            #expect(ranges.count == 1 && ranges.first?.hasPrefix("bytes=") == true, "continued with a Range: \(ranges)")
            // Continued from the bytes on disk: nothing fetched twice but what was in flight when the sleep stopped it.
            #expect(stats.bytesSent(target) <= (1 << 20) + 256 * 1024, "\(stats.bytesSent(target)) bytes sent")
            try await waitUntil("the delay inhibitor released after the last transfer") {
                delay(try await system.inhibitors()).allSatisfy(\.released)
            }
        }
    }

    /// `InhibitSleep`: while a foreground task transfers, hauld also holds a `block` inhibitor for `sleep:idle`, and
    /// lets it go when the transfer stops; the setting is kept across a restart.
    @Test func inhibitSleepBlocksIdleSleepWhileForegroundTasksRun() async throws {
        let system = try await FakeSystemBus.start()
        defer { system.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-inhibit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let block = { @Sendable (inhibitors: [FakeSystemBus.Inhibitor]) in
            inhibitors.filter { $0.mode == "block" && $0.what.contains("idle") }
        }
        try await TransferFixture.with(stateDirectory: state, environment: system.environment) { f throws in
            try await f.calls.set(.inhibitSleep, to: .boolean(true))
            // On loopback, paused by the server for good after 100 000 bytes: it transfers until cancelled.
            let task = try await f.download("/gen/1m?seed=68&stall-after=100000", to: "held.bin")
            try await f.wait(task, received: 1)
            try await waitUntil("a block inhibitor held") { block(try await system.inhibitors()).contains { !$0.released } }
            try await f.taskCall(task, .cancel)
            try await waitUntil("the block inhibitor released") { block(try await system.inhibitors()).allSatisfy(\.released) }
        }
        try await TransferFixture.with(stateDirectory: state, environment: system.environment) { f throws in
            #expect(try await Self.manager(f, .inhibitSleep) == .boolean(true))
        }
    }
}
