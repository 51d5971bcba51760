import HaulCore
import Testing

/// Delay changes: a running timer moves to `armed instant + new delay`, or expires at once when that is past.
@Suite("Activity indicator delays", .timeLimit(.minutes(2)))
struct ActivityIndicatorDelayTests {
    static let completion = Duration.milliseconds(200)
    static let activation = Duration.seconds(1)

    // MARK: Activation timer running (armed at 0 ms, due at 1000 ms, generation 1)

    @Test func shorterActivationDelayReArmsEarlier() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(500), completion: Self.completion, now: ms(200))
                == [.armTimer(.activation, deadline: ms(500), generation: 2)]
        )
        #expect(scenario.machine.activationDelay == .milliseconds(500))
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 2, now: ms(500)) == showing)
    }

    @Test func longerActivationDelayReArmsLater() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .seconds(3), completion: Self.completion, now: ms(500))
                == [.armTimer(.activation, deadline: ms(3000), generation: 2)]
        )
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) == [])
        #expect(scenario.machine.timerFired(.activation, generation: 2, now: ms(3000)) == showing)
    }

    @Test func activationDelayAlreadyPastExpiresAtOnceWithActivity() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(400), completion: Self.completion, now: ms(600))
                == [.cancelTimer(.activation), .publishState(.active), .setVisible(true)]
        )
        #expect(scenario.machine.state == .active)
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) == [])
    }

    @Test func activationDelayAlreadyPastExpiresAtOnceWithoutActivity() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        _ = scenario.machine.activityCountChanged(to: 0, now: ms(100))
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(400), completion: Self.completion, now: ms(600))
                == [.cancelTimer(.activation), .publishState(.notActive)]
        )
        #expect(scenario.machine.state == .notActive)
    }

    @Test func activationDeadlineExactlyNowExpiresAtOnce() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(600), completion: Self.completion, now: ms(600))
                == [.cancelTimer(.activation), .publishState(.active), .setVisible(true)]
        )
    }

    @Test func successiveChangesAreRelativeToTheInstantTheTimerWasArmed() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .seconds(2), completion: Self.completion, now: ms(100))
                == [.armTimer(.activation, deadline: ms(2000), generation: 2)]
        )
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(500), completion: Self.completion, now: ms(200))
                == [.armTimer(.activation, deadline: ms(500), generation: 3)]
        )
        #expect(
            scenario.machine.delaysChanged(activation: .milliseconds(300), completion: Self.completion, now: ms(400))
                == [.cancelTimer(.activation), .publishState(.active), .setVisible(true)]
        )
    }

    @Test func negativeActivationDelayIsClampedToZeroAndExpiresAtOnce() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .seconds(-1), completion: Self.completion, now: ms(100))
                == [.cancelTimer(.activation), .publishState(.active), .setVisible(true)]
        )
        #expect(scenario.machine.activationDelay == .zero)
    }

    @Test func unchangedActivationDelayDoesNothing() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        let actions = scenario.machine.delaysChanged(
            activation: Self.activation, completion: Self.completion, now: ms(100)
        )
        #expect(actions == [])
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) != [])
    }

    @Test func completionDelayChangeWhileActivationRunsOnlyApplies() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        let actions = scenario.machine.delaysChanged(
            activation: Self.activation, completion: .milliseconds(50), now: ms(100)
        )
        #expect(actions == [])
        #expect(scenario.machine.completionDelay == .milliseconds(50))
        _ = scenario.machine.timerFired(.activation, generation: 1, now: ms(1000))
        #expect(
            scenario.machine.activityCountChanged(to: 0, now: ms(1100)) == [
                .armTimer(.completion, deadline: ms(1150), generation: 2),
                .publishState(.delayingEnd),
            ]
        )
    }

    // MARK: Completion timer running (armed at 1500 ms, due at 1700 ms, generation 2)

    @Test func shorterCompletionDelayReArmsEarlier() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.delaysChanged(activation: Self.activation, completion: .milliseconds(100), now: ms(1550))
                == [.armTimer(.completion, deadline: ms(1600), generation: 3)]
        )
        #expect(scenario.machine.timerFired(.completion, generation: 2, now: ms(1700)) == [])
        #expect(scenario.machine.state == .delayingEnd)
        #expect(scenario.machine.timerFired(.completion, generation: 3, now: ms(1600)) == hiding)
    }

    @Test func longerCompletionDelayReArmsLater() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.delaysChanged(activation: Self.activation, completion: .seconds(2), now: ms(1600))
                == [.armTimer(.completion, deadline: ms(3500), generation: 3)]
        )
        #expect(scenario.machine.timerFired(.completion, generation: 2, now: ms(1700)) == [])
        #expect(scenario.machine.isVisible)
        #expect(scenario.machine.timerFired(.completion, generation: 3, now: ms(3500)) == hiding)
    }

    @Test func completionDelayAlreadyPastExpiresAtOnce() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.delaysChanged(activation: Self.activation, completion: .milliseconds(50), now: ms(1600))
                == [.cancelTimer(.completion), .publishState(.notActive), .setVisible(false)]
        )
        #expect(scenario.machine.state == .notActive)
        #expect(scenario.machine.timerFired(.completion, generation: 2, now: ms(1700)) == [])
    }

    @Test func activationDelayChangeWhileCompletionRunsOnlyApplies() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        let actions = scenario.machine.delaysChanged(
            activation: .milliseconds(10), completion: Self.completion, now: ms(1600)
        )
        #expect(actions == [])
        #expect(scenario.machine.state == .delayingEnd)
        #expect(scenario.machine.activationDelay == .milliseconds(10))
    }

    @Test func hugeCompletionDelayIsClampedToTheMaximum() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.delaysChanged(activation: Self.activation, completion: .seconds(1_000_000), now: ms(1600))
                == [.armTimer(.completion, deadline: ms(61_500), generation: 3)]
        )
        #expect(scenario.machine.completionDelay == .seconds(60))
    }

    // MARK: No timer running

    @Test(arguments: [ActivityIndicatorState.notActive, .active])
    func changesWithoutARunningTimerOnlyApply(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        let actions = scenario.machine.delaysChanged(
            activation: .milliseconds(10), completion: .milliseconds(20), now: ms(1200)
        )
        #expect(actions == [])
        #expect(scenario.machine.state == state)
        #expect(scenario.machine.activationDelay == .milliseconds(10))
        #expect(scenario.machine.completionDelay == .milliseconds(20))
    }

    @Test func newDelaysApplyToTheNextTimer() {
        var scenario = ActivityIndicatorScenario(.active)
        _ = scenario.machine.delaysChanged(activation: .milliseconds(10), completion: .milliseconds(20), now: ms(1200))
        #expect(
            scenario.machine.activityCountChanged(to: 0, now: ms(1300)) == [
                .armTimer(.completion, deadline: ms(1320), generation: 2),
                .publishState(.delayingEnd),
            ]
        )
    }
}
