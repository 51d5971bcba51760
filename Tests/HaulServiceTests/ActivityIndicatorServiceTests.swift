import DBusKit
import HaulContract
import HaulTestSupport
import Testing
@testable import HaulService

/// The indicator service's delays in virtual time, in-process: when `VisibilityChanged` goes out, to the nanosecond.
/// When the machine shows or hides is `ActivityIndicatorStateMachine`'s (`ActivityIndicator*Tests`); here its timers
/// are armed, fired and cancelled by the service, and what it publishes is what a client receives.
@Suite(.timeLimit(.minutes(3))) struct ActivityIndicatorServiceTests {
    static let owner = ":1.999"

    /// The States and the visibility published up to the next `VisibilityChanged`.
    static func published(_ harness: TaskServiceHarness) async -> (states: [DBusValue], visible: DBusValue?) {
        let signals = await harness.indicatorSignals()
        return (signals.compactMap { $0.changedProperties?[IndicatorProperty.state.name] }, signals.last?.body.first)
    }

    @Test func shownAfterTheActivationDelayAndHiddenAfterTheCompletionDelay() async throws {
        try await TaskServiceHarness.with { harness throws in
            let clock = harness.indicatorClock
            let started = clock.now
            await harness.indicator.increment(owner: Self.owner)
            await clock.waitForSleepers(count: 1)
            let shownAt = started.advanced(by: .seconds(1))
            #expect(clock.deadlines == [shownAt])
            clock.advance(to: shownAt.advanced(by: .nanoseconds(-1)))
            #expect(clock.deadlines == [shownAt], "not a nanosecond early")
            clock.advance(to: shownAt)
            let shown = await Self.published(harness)
            #expect(shown.states == [.state(.delayingStart), .state(.active)])
            #expect(shown.visible == .boolean(true))

            let stopped = clock.now
            await harness.indicator.decrement(owner: Self.owner)
            await clock.waitForSleepers(count: 1)
            let hiddenAt = stopped.advanced(by: .milliseconds(170))
            #expect(clock.deadlines == [hiddenAt])
            clock.advance(to: hiddenAt)
            let hidden = await Self.published(harness)
            #expect(hidden.states == [.state(.delayingEnd), .state(.notActive)])
            #expect(hidden.visible == .boolean(false))
        }
    }

    /// Activity that ends within the activation delay never shows: the activation timer still decides, and finds
    /// nothing to show. The next `VisibilityChanged` is the one the next lasting activity causes.
    @Test func aShortBurstNeverShows() async throws {
        try await TaskServiceHarness.with { harness throws in
            let clock = harness.indicatorClock
            let started = clock.now
            await harness.indicator.increment(owner: Self.owner)
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .milliseconds(999))
            await harness.indicator.decrement(owner: Self.owner)
            #expect(clock.deadlines == [started.advanced(by: .seconds(1))])
            clock.advance(by: .milliseconds(1))
            let quiet = await harness.indicatorSignals { $0.changedProperties?[IndicatorProperty.state.name] == .state(.notActive) }
            let states = quiet.compactMap { $0.changedProperties?[IndicatorProperty.state.name] }
            #expect(states == [.state(.delayingStart), .state(.notActive)])
            #expect(quiet.allSatisfy { $0.member != IndicatorSignal.visibilityChanged.rawValue && $0.changedProperties?[IndicatorProperty.visible.name] == nil })
            await harness.indicator.increment(owner: Self.owner)
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
            let shown = await Self.published(harness)
            #expect(shown.states == [.state(.delayingStart), .state(.active)])
            #expect(shown.visible == .boolean(true))
        }
    }

    /// A delay changed while its timer runs counts from when the timer started: shortened below the time already
    /// waited, the indicator shows at once; lengthened, later.
    @Test func aDelayChangedWhileItsTimerRunsCountsFromItsStart() async throws {
        try await TaskServiceHarness.with { harness throws in
            let clock = harness.indicatorClock
            try await harness.setIndicator(IndicatorProperty.activationDelay.name, .double(30))
            let started = clock.now
            await harness.indicator.increment(owner: Self.owner)
            await clock.waitForSleepers(count: 1)
            #expect(clock.deadlines == [started.advanced(by: .seconds(30))])
            clock.advance(by: .seconds(5))
            try await harness.setIndicator(IndicatorProperty.activationDelay.name, .double(50))
            await clock.waitForSleepers { $0 == [started.advanced(by: .seconds(50))] }
            try await harness.setIndicator(IndicatorProperty.activationDelay.name, .double(2))
            let published = await Self.published(harness)
            #expect(published.visible == .boolean(true))
            #expect(clock.now == started.advanced(by: .seconds(5)), "shown at once, in virtual time")
        }
    }

    /// The running-task count the task service reports drives the same delays.
    @Test func runningTasksCountAsActivity() async throws {
        try await TaskServiceHarness.with { harness throws in
            let clock = harness.indicatorClock
            let (_, id) = try await harness.download("busy.bin")
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(1))
            #expect(await Self.published(harness).visible == .boolean(true))
            try await harness.tasks.run(.suspend, on: id)
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .milliseconds(170))
            #expect(await Self.published(harness).visible == .boolean(false))
        }
    }
}
