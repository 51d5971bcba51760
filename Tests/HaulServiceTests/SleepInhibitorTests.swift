import DBusKit
@testable import HaulService
import HaulTestSupport
import Testing

/// `SleepInhibitor` against a fake logind that hands out real file descriptors and sees them closed.
@Suite(.timeLimit(.minutes(3))) struct SleepInhibitorTests {
    typealias Inhibitor = FakeSystemBus.Inhibitor

    static let delay = Inhibitor(
        what: "sleep", who: "Haul", why: "Transfers are running", mode: "delay", released: false
    )
    static let block = Inhibitor(
        what: "sleep:idle", who: "Haul", why: "Transfers are running", mode: "block", released: false
    )

    /// Runs `body` with an inhibitor following the fake logind (from the first element of `prepareForSleep` on), and
    /// what that stream has given.
    func withInhibitor(
        absent: Set<FakeSystemBus.Service> = [],
        _ body: (FakeSystemBus, SleepInhibitor, Recording<Bool>) async throws -> Void
    ) async throws {
        try await SystemFixture.with(absent: absent) { fixture throws in
            let inhibitor = SleepInhibitor(connection: fixture.connection)
            let sleeps = Recording.of(inhibitor.prepareForSleep)
            let following = Task { await inhibitor.run() }
            defer { following.cancel() }
            #expect(await sleeps.first(1) == [false])
            try await body(fixture.system, inhibitor, sleeps)
        }
    }

    @Test func theDelayInhibitorIsTakenAndReleasedByClosingItsDescriptor() async throws {
        try await withInhibitor { system, inhibitor, _ throws in
            inhibitor.holdDelay(true)
            try await waitUntil("inhibitor.isHolding(.delay)") { inhibitor.isHolding(.delay) }
            #expect(try await system.inhibitors() == [Self.delay])
            // Asked again while held: nothing more.
            inhibitor.holdDelay(true)
            inhibitor.holdDelay(false)
            // Closed in the call itself.
            #expect(!inhibitor.isHolding(.delay))
            #expect(try await system.inhibitors { $0.allSatisfy(\.released) } == [Self.delay.afterRelease])
        }
    }

    @Test func theBlockInhibitorBesideTheDelayOne() async throws {
        try await withInhibitor { system, inhibitor, _ throws in
            inhibitor.holdDelay(true)
            inhibitor.holdBlock(true)
            try await waitUntil(
                "inhibitor.isHolding(.delay) && inhibitor.isHolding(.block)", timeout: .seconds(30)
            ) { inhibitor.isHolding(.delay) && inhibitor.isHolding(.block) }
            #expect(Set(try await system.inhibitors()) == [Self.delay, Self.block])
            inhibitor.holdBlock(false)
            let inhibitors = try await system.inhibitors { $0.contains(where: \.released) }
            #expect(Set(inhibitors) == [Self.delay, Self.block.afterRelease])
            #expect(inhibitor.isHolding(.delay))
        }
    }

    @Test func prepareForSleepIsPassedOnAndJunkIsNot() async throws {
        try await withInhibitor { system, _, sleeps throws in
            try await system.emitPrepareForSleep(true)
            try await system.emitPrepareForSleep(raw: .string("true"))
            try await system.emitPrepareForSleep(raw: .uint32(1))
            try await system.emitPrepareForSleep(raw: .variant(.boolean(false)))
            try await system.emitPrepareForSleep(raw: .strings([]))
            try await system.emitPrepareForSleep(false)
            try await system.emitPrepareForSleep(true)
            #expect(await sleeps.first(4) == [false, true, false, true])
            #expect(await sleeps.elements.count == 4)
        }
    }

    @Test func startingWhileTheMachineIsGoingToSleep() async throws {
        try await SystemFixture.with { fixture throws in
            try await fixture.system.emitPrepareForSleep(true)
            let inhibitor = SleepInhibitor(connection: fixture.connection)
            let sleeps = Recording.of(inhibitor.prepareForSleep)
            let following = Task { await inhibitor.run() }
            defer { following.cancel() }
            // logind's PreparingForSleep comes first.
            #expect(await sleeps.first(1) == [true])
            try await fixture.system.emitPrepareForSleep(false)
            #expect(await sleeps.first(2) == [true, false])
        }
    }

    @Test func aPreparingForSleepOfAnotherTypeIsNotSleep() async throws {
        try await SystemFixture.with { fixture throws in
            try await fixture.system.setProperties(.login, ["PreparingForSleep": .string("yes")])
            let inhibitor = SleepInhibitor(connection: fixture.connection)
            let sleeps = Recording.of(inhibitor.prepareForSleep)
            let following = Task { await inhibitor.run() }
            defer { following.cancel() }
            #expect(await sleeps.first(1) == [false])
            try await fixture.system.emitPrepareForSleep(true)
            #expect(await sleeps.first(2) == [false, true])
        }
    }

    @Test func aSignalFromAnotherPeerIsNoPrepareForSleep() async throws {
        try await withInhibitor { system, _, sleeps throws in
            let impostor = try await system.connect()
            try await impostor.send(
                .signal(
                    path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                    member: "PrepareForSleep", body: [.boolean(true)]
                )
            )
            // The bus handles a connection's messages in order: once it has answered, the signal has gone its way.
            _ = try await impostor.nameHasOwner("org.freedesktop.login1")
            try await system.emitPrepareForSleep(false)
            #expect(await sleeps.first(2) == [false, false])
            await impostor.close()
        }
    }

    @Test func logindComingAndGoing() async throws {
        try await withInhibitor(absent: [.login]) { system, inhibitor, sleeps throws in
            inhibitor.holdDelay(true)
            try await system.setPresent(.login, true)
            try await waitUntil("inhibitor.isHolding(.delay)") { inhibitor.isHolding(.delay) }
            #expect(try await system.inhibitors() == [Self.delay])
            // Going to sleep, and logind leaves before it says the machine woke: the inhibitor it handed out is
            // closed, and the owner hears that sleep is over.
            try await system.emitPrepareForSleep(true)
            #expect(await sleeps.first(2) == [false, true])
            try await system.setPresent(.login, false)
            #expect(await sleeps.first(3) == [false, true, false])
            #expect(try await system.inhibitors { $0.allSatisfy(\.released) } == [Self.delay.afterRelease])
            #expect(!inhibitor.isHolding(.delay))
            // Back, still preparing for sleep (its PreparingForSleep), and the wanted inhibitor is taken again.
            try await system.setPresent(.login, true)
            #expect(await sleeps.first(4) == [false, true, false, true])
            try await waitUntil("inhibitor.isHolding(.delay)") { inhibitor.isHolding(.delay) }
            #expect(try await system.inhibitors() == [Self.delay.afterRelease, Self.delay])
            try await system.emitPrepareForSleep(false)
            #expect(await sleeps.first(5) == [false, true, false, true, false])
        }
    }

    @Test func inhibitThatFailsOrAnswersJunk() async throws {
        try await withInhibitor { system, inhibitor, _ throws in
            for (index, reply) in [FakeSystemBus.Reply.error, .junk].enumerated() {
                try await system.setReply(.login, member: "Inhibit", reply)
                inhibitor.holdDelay(true)
                try await waitUntil("system.calls(.login, member: \"Inhibit\") == index + 1") { try await system.calls(.login, member: "Inhibit") == index + 1 }
                #expect(!inhibitor.isHolding(.delay))
                #expect(try await system.inhibitors().isEmpty)
                inhibitor.holdDelay(false)
            }
            // Wanted anew once logind answers properly.
            try await system.setReply(.login, member: "Inhibit", .normal)
            inhibitor.holdDelay(true)
            try await waitUntil("inhibitor.isHolding(.delay)") { inhibitor.isHolding(.delay) }
            #expect(try await system.inhibitors() == [Self.delay])
        }
    }

    @Test func logindDyingMidCallAndComingBack() async throws {
        try await withInhibitor { system, inhibitor, _ throws in
            try await system.setReply(.login, member: "Inhibit", .die)
            inhibitor.holdBlock(true)
            try await waitUntil("!system.isPresent(.login)") { try await !system.isPresent(.login) }
            try await system.setReply(.login, member: "Inhibit", .normal)
            try await system.setPresent(.login, true)
            try await waitUntil("inhibitor.isHolding(.block)") { inhibitor.isHolding(.block) }
            #expect(try await system.inhibitors() == [Self.block])
        }
    }

    @Test func releasedWhileLogindIsStillAnswering() async throws {
        try await withInhibitor { system, inhibitor, _ throws in
            try await system.setReply(.login, member: "Inhibit", .slow)
            inhibitor.holdDelay(true)
            try await waitUntil("system.calls(.login, member: \"Inhibit\") == 1") { try await system.calls(.login, member: "Inhibit") == 1 }
            inhibitor.holdDelay(false)
            // The descriptor that comes late is closed at once.
            let inhibitors = try await system.inhibitors { $0.count == 1 && $0.allSatisfy(\.released) }
            #expect(inhibitors == [Self.delay.afterRelease])
            #expect(!inhibitor.isHolding(.delay))
            // Let go and wanted again while the answer is on its way: held once it comes, asked for once.
            inhibitor.holdDelay(true)
            try await waitUntil("system.calls(.login, member: \"Inhibit\") == 2") { try await system.calls(.login, member: "Inhibit") == 2 }
            inhibitor.holdDelay(false)
            inhibitor.holdDelay(true)
            try await waitUntil("inhibitor.isHolding(.delay)") { inhibitor.isHolding(.delay) }
            #expect(try await system.inhibitors() == [Self.delay.afterRelease, Self.delay])
            #expect(try await system.calls(.login, member: "Inhibit") == 2)
        }
    }

    @Test func everythingIsReleasedWhenItStops() async throws {
        try await SystemFixture.with { fixture throws in
            let inhibitor = SleepInhibitor(connection: fixture.connection)
            let sleeps = Recording.of(inhibitor.prepareForSleep)
            let following = Task { await inhibitor.run() }
            inhibitor.holdDelay(true)
            inhibitor.holdBlock(true)
            try await waitUntil(
                "inhibitor.isHolding(.delay) && inhibitor.isHolding(.block)", timeout: .seconds(30)
            ) { inhibitor.isHolding(.delay) && inhibitor.isHolding(.block) }
            #expect(await sleeps.first(1) == [false])
            try await fixture.system.emitPrepareForSleep(true)
            #expect(await sleeps.first(2) == [false, true])
            following.cancel()
            await following.value
            #expect(!inhibitor.isHolding(.delay) && !inhibitor.isHolding(.block))
            let inhibitors = try await fixture.system.inhibitors { $0.allSatisfy(\.released) }
            #expect(Set(inhibitors) == [Self.delay.afterRelease, Self.block.afterRelease])
            #expect(await sleeps.finished())
            #expect(await sleeps.elements == [false, true, false])
        }
    }
}

extension FakeSystemBus.Inhibitor {
    /// The same inhibitor, released.
    var afterRelease: Self { Self(what: what, who: who, why: why, mode: mode, released: true) }
}
