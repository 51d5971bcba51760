import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// The delayed activity manager as clients see it on a real bus.
@Suite(.timeLimit(.minutes(2))) struct IndicatorBusTests {
    /// VisibilityChanged follows the configured delays. Lower bounds are exact (never early); upper bounds
    /// are loose because a loaded 2-core machine can be late.
    @Test func visibilityFollowsTheConfiguredDelays() async throws {
        try await DaemonFixture.with { fixture throws in
            try await fixture.setIndicator(.activationDelay, .double(0.3))
            try await fixture.setIndicator(.completionDelay, .double(0.2))
            let signals = try await fixture.client.messages(matching: [
                MatchRule(kind: .signal, interface: HaulBus.indicatorInterface, member: "VisibilityChanged")
            ])
            var iterator = signals.makeAsyncIterator()
            let holder = try await DBusConnection.connect(address: fixture.bus.address)

            let started = ContinuousClock.now
            try await fixture.callIndicator(.incrementActivityCount, on: holder)
            let shown = await iterator.next()
            let activation = ContinuousClock.now - started
            #expect(shown?.body == [.boolean(true)])
            #expect(activation >= .milliseconds(290) && activation < .seconds(5), "shown after \(activation)")

            let stopped = ContinuousClock.now
            try await fixture.callIndicator(.decrementActivityCount, on: holder)
            let hidden = await iterator.next()
            let completion = ContinuousClock.now - stopped
            #expect(hidden?.body == [.boolean(false)])
            #expect(completion >= .milliseconds(190) && completion < .seconds(5), "hidden after \(completion)")
            await holder.close()
        }
    }

    /// A burst that ends inside the activation delay never shows, and a delay shortened while its timer
    /// runs takes effect from when the timer started (here: at once).
    @Test func aShortBurstNeverShows() async throws {
        try await DaemonFixture.with { fixture throws in
            try await fixture.setIndicator(.activationDelay, .double(30))
            let changes = try await fixture.client.messages(matching: [
                MatchRule(kind: .signal, interface: HaulBus.indicatorInterface, member: "VisibilityChanged")
            ])
            try await fixture.callIndicator(.incrementActivityCount)
            #expect(try await fixture.indicatorProperty(.state) == .state(.delayingStart))
            try await fixture.callIndicator(.decrementActivityCount)
            #expect(try await fixture.indicatorProperty(.state) == .state(.delayingStart))
            try await fixture.setIndicator(.activationDelay, .double(0))
            try await waitUntil("the indicator to go idle") {
                try await fixture.indicatorProperty(.state) == .state(.notActive)
            }
            #expect(try await fixture.indicatorProperty(.visible) == .boolean(false))
            // Nothing was announced: the next signal is the one this test provokes now.
            try await fixture.callIndicator(.incrementActivityCount)
            var iterator = changes.makeAsyncIterator()
            #expect(await iterator.next()?.body == [.boolean(true)])
        }
    }

    @Test func holdsOfAClientThatLeavesAreReleased() async throws {
        try await DaemonFixture.with { fixture throws in
            let leaver = try await DBusConnection.connect(address: fixture.bus.address)
            let stayer = try await DBusConnection.connect(address: fixture.bus.address)
            for _ in 0..<3 { try await fixture.callIndicator(.incrementActivityCount, on: leaver) }
            try await fixture.callIndicator(.incrementActivityCount, on: stayer)
            #expect(try await fixture.indicatorProperty(.activityCount) == .uint32(4))
            await leaver.close()
            try await waitUntil("the leaver's holds to go", timeout: .seconds(5)) {
                try await fixture.indicatorProperty(.activityCount) == .uint32(1)
            }
            await stayer.close()
        }
    }

    @Test func decrementClampsPerCallerAndNeverTouchesOthers() async throws {
        try await DaemonFixture.with { fixture throws in
            let other = try await DBusConnection.connect(address: fixture.bus.address)
            try await fixture.callIndicator(.incrementActivityCount, on: other)
            for _ in 0..<5 { try await fixture.callIndicator(.decrementActivityCount) }
            #expect(try await fixture.indicatorProperty(.activityCount) == .uint32(1))
            try await fixture.callIndicator(.decrementActivityCount, on: other)
            #expect(try await fixture.indicatorProperty(.activityCount) == .uint32(0))
            await other.close()
        }
    }

    @Test func fiftyClientsAtOnce() async throws {
        try await DaemonFixture.with { fixture throws in
            let clients = try await withThrowingTaskGroup(of: DBusConnection.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let connection = try await DBusConnection.connect(address: fixture.bus.address)
                        try await fixture.callIndicator(.incrementActivityCount, on: connection)
                        return connection
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(try await fixture.indicatorProperty(.activityCount) == .uint32(50))
            await withTaskGroup(of: Void.self) { group in
                for client in clients { group.addTask { await client.close() } }
            }
            try await waitUntil("the fifty clients' holds to go") {
                try await fixture.indicatorProperty(.activityCount) == .uint32(0)
            }
        }
    }

    @Test func disablingHidesAtOnceAndEnablingReevaluates() async throws {
        try await DaemonFixture.with { fixture throws in
            try await fixture.setIndicator(.activationDelay, .double(0))
            try await fixture.callIndicator(.incrementActivityCount)
            try await waitUntil("the indicator to show") {
                try await fixture.indicatorProperty(.visible) == .boolean(true)
            }
            try await fixture.setIndicator(.enabled, .boolean(false))
            #expect(try await fixture.indicatorProperty(.visible) == .boolean(false))
            #expect(try await fixture.indicatorProperty(.state) == .state(.notActive))
            try await fixture.setIndicator(.enabled, .boolean(true))
            try await waitUntil("the indicator to show") {
                try await fixture.indicatorProperty(.visible) == .boolean(true)
            }
        }
    }

    @Test(arguments: [
        (IndicatorProperty.activationDelay, DBusValue.double(-1)), (.activationDelay, .double(.nan)),
        (.completionDelay, .double(.infinity)), (.completionDelay, .double(61)),
        (.activationDelay, .string("1")), (.enabled, .uint32(1)),
    ])
    func invalidSettingsAreRefusedWithInvalidArgs(_ property: IndicatorProperty, _ value: DBusValue) async throws {
        try await DaemonFixture.with { fixture throws in
            do {
                try await fixture.setIndicator(property, value)
                Issue.record("\(property.name) accepted \(value)")
            } catch let error as DBusError {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
                #expect(error.message.contains(property.name))
            }
            #expect(try await fixture.indicatorProperty(.activationDelay) == .double(IndicatorDefaults.activationDelay))
            #expect(try await fixture.indicatorProperty(.completionDelay) == .double(IndicatorDefaults.completionDelay))
        }
    }

    @Test func readOnlyPropertiesCannotBeWritten() async throws {
        try await DaemonFixture.with { fixture throws in
            let writes: [(IndicatorProperty, DBusValue)] = [
                (.visible, .boolean(true)), (.state, .state(.active)), (.activityCount, .uint32(3)),
            ]
            #expect(writes.map(\.0) == IndicatorProperty.allCases.filter { !$0.isWritable })
            for (property, value) in writes {
                do {
                    try await fixture.setIndicator(property, value)
                    Issue.record("\(property.name) was writable")
                } catch let error as DBusError {
                    #expect(error.name == "org.freedesktop.DBus.Error.PropertyReadOnly")
                }
            }
        }
    }

    @Test func settingsPersistAcrossRestarts() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("haul-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        try await DaemonFixture.with(stateDirectory: state) { fixture throws in
            try await fixture.setIndicator(.activationDelay, .double(0.25))
            try await fixture.setIndicator(.enabled, .boolean(false))
        }
        try await DaemonFixture.with(stateDirectory: state) { fixture throws in
            #expect(try await fixture.indicatorProperty(.activationDelay) == .double(0.25))
            #expect(try await fixture.indicatorProperty(.enabled) == .boolean(false))
            #expect(try await fixture.indicatorProperty(.completionDelay) == .double(IndicatorDefaults.completionDelay))
        }
    }

    @Test func propertiesChangedAnnouncesEveryChange() async throws {
        try await DaemonFixture.with { fixture throws in
            let changes = try await fixture.client.messages(matching: [
                MatchRule(kind: .signal, path: HaulBus.managerPath, interface: "org.freedesktop.DBus.Properties",
                          member: "PropertiesChanged", arg0: HaulBus.indicatorInterface)
            ])
            var iterator = changes.makeAsyncIterator()
            try await fixture.setIndicator(.completionDelay, .double(0.5))
            let delay = await iterator.next()?.body[1].stringDictionary
            #expect(delay?[IndicatorProperty.completionDelay.name] == .variant(.double(0.5)))
            try await fixture.callIndicator(.incrementActivityCount)
            let counted = await iterator.next()?.body[1].stringDictionary
            #expect(counted?[IndicatorProperty.activityCount.name] == .variant(.uint32(1)))
            #expect(counted?[IndicatorProperty.state.name] == .variant(.state(.delayingStart)))
        }
    }
}
