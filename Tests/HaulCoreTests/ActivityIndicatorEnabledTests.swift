import HaulCore
import Testing

/// `Enabled`: disabling forces not-active from every state; re-enabling re-evaluates at once.
@Suite("Activity indicator enabled", .timeLimit(.minutes(2)))
struct ActivityIndicatorEnabledTests {
    static let disablingActions: [(ActivityIndicatorState, [Machine.Action])] = [
        (.notActive, []),
        (.delayingStart, [.cancelTimer(.activation), .publishState(.notActive)]),
        (.active, [.publishState(.notActive), .setVisible(false)]),
        (.delayingEnd, [.cancelTimer(.completion), .publishState(.notActive), .setVisible(false)]),
    ]

    @Test(arguments: disablingActions)
    func disablingForcesNotActive(_ state: ActivityIndicatorState, expected: [Machine.Action]) {
        var scenario = ActivityIndicatorScenario(state)
        #expect(scenario.machine.state == state)
        #expect(scenario.machine.enabledChanged(false, now: scenario.now) == expected)
        #expect(scenario.machine.state == .notActive)
        #expect(!scenario.machine.isVisible)
        #expect(!scenario.machine.isEnabled)
        #expect(scenario.machine.enabledChanged(false, now: scenario.now) == [], "disabling twice does nothing")
    }

    @Test(arguments: ActivityIndicatorState.allCases)
    func timerArmedBeforeDisablingDoesNothingAfterwards(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        _ = scenario.machine.enabledChanged(false, now: scenario.now)
        if let armed = scenario.armed {
            #expect(scenario.machine.timerFired(armed.kind, generation: armed.generation, now: armed.deadline) == [])
        }
        #expect(scenario.machine.state == .notActive)
    }

    @Test(arguments: ActivityIndicatorState.allCases)
    func countChangesWhileDisabledAreRememberedButDoNothing(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        _ = scenario.machine.enabledChanged(false, now: scenario.now)
        for count: UInt32 in [3, 0, 2] {
            #expect(scenario.machine.activityCountChanged(to: count, now: scenario.now) == [])
            #expect(scenario.machine.activityCount == count)
            #expect(scenario.machine.state == .notActive)
        }
    }

    /// Whatever the state it was disabled in, re-enabling with activity starts a fresh activation delay at once.
    @Test(arguments: ActivityIndicatorState.allCases)
    func reEnablingWithActivityGoesToDelayingStartAtOnce(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        _ = scenario.machine.enabledChanged(false, now: ms(5000))
        _ = scenario.machine.activityCountChanged(to: 2, now: ms(5100))
        let actions = scenario.machine.enabledChanged(true, now: ms(5200))
        guard case .armTimer(.activation, ms(6200), let generation)? = actions.first else {
            Issue.record("expected the activation timer first, got \(actions)")
            return
        }
        #expect(
            actions == [
                .armTimer(.activation, deadline: ms(6200), generation: generation), .publishState(.delayingStart),
            ]
        )
        #expect(scenario.machine.isEnabled)
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: generation, now: ms(6200)) == showing)
    }

    @Test(arguments: ActivityIndicatorState.allCases)
    func reEnablingWithoutActivityStaysNotActive(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        _ = scenario.machine.enabledChanged(false, now: ms(5000))
        _ = scenario.machine.activityCountChanged(to: 0, now: ms(5100))
        #expect(scenario.machine.enabledChanged(true, now: ms(5200)) == [])
        #expect(scenario.machine.state == .notActive)
        #expect(scenario.machine.isEnabled)
    }

    @Test(arguments: ActivityIndicatorState.allCases)
    func enablingWhenEnabledDoesNothing(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        #expect(scenario.machine.enabledChanged(true, now: scenario.now) == [])
        #expect(scenario.machine.state == state)
    }

    @Test func startingDisabledRemembersActivityUntilEnabled() {
        var machine = Machine(activationDelay: .seconds(1), completionDelay: .milliseconds(200), isEnabled: false)
        #expect(!machine.isEnabled)
        #expect(machine.activityCountChanged(to: 1, now: ms(0)) == [])
        #expect(machine.state == .notActive)
        #expect(
            machine.enabledChanged(true, now: ms(300)) == [
                .armTimer(.activation, deadline: ms(1300), generation: 1),
                .publishState(.delayingStart),
            ]
        )
    }

    @Test func delaysChangedWhileDisabledApplyAfterReEnabling() {
        var machine = Machine(isEnabled: false)
        #expect(machine.delaysChanged(activation: .milliseconds(300), completion: .milliseconds(50), now: ms(0)) == [])
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        #expect(
            machine.enabledChanged(true, now: ms(100)) == [
                .armTimer(.activation, deadline: ms(400), generation: 1),
                .publishState(.delayingStart),
            ]
        )
    }
}
