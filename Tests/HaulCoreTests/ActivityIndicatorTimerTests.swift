import HaulCore
import Testing

/// Timer generations: a timer cancelled or re-armed since it was armed must do nothing when it fires.
@Suite("Activity indicator timers", .timeLimit(.minutes(2)))
struct ActivityIndicatorTimerTests {
    @Test func activationTimerWithAWrongGenerationIsIgnored() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 7, now: ms(1000)) == [])
        #expect(scenario.machine.timerFired(.activation, generation: 0, now: ms(1000)) == [])
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) != [])
    }

    @Test func timerOfTheOtherKindIsIgnoredEvenWithTheCurrentGeneration() {
        var starting = ActivityIndicatorScenario(.delayingStart)
        #expect(starting.machine.timerFired(.completion, generation: 1, now: ms(1000)) == [])
        #expect(starting.machine.state == .delayingStart)

        var ending = ActivityIndicatorScenario(.delayingEnd)
        #expect(ending.machine.timerFired(.activation, generation: 2, now: ms(1700)) == [])
        #expect(ending.machine.state == .delayingEnd)
    }

    @Test(arguments: [ActivityIndicatorState.notActive, .active])
    func timersFiringWhenNoneIsArmedAreIgnored(_ state: ActivityIndicatorState) {
        var scenario = ActivityIndicatorScenario(state)
        for kind in ActivityIndicatorTimer.allCases {
            for generation: UInt64 in 0...3 {
                #expect(scenario.machine.timerFired(kind, generation: generation, now: ms(5000)) == [])
            }
        }
        #expect(scenario.machine.state == state)
    }

    @Test func activationTimerAlreadyConsumedIsIgnoredWhenDeliveredTwice() {
        var scenario = ActivityIndicatorScenario(.active)
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1001)) == [])
        #expect(scenario.machine.state == .active)
    }

    @Test func completionTimerCancelledByNewActivityIsIgnored() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        _ = scenario.machine.activityCountChanged(to: 1, now: ms(1600))
        #expect(scenario.machine.timerFired(.completion, generation: 2, now: ms(1700)) == [])
        #expect(scenario.machine.state == .active)
        #expect(scenario.machine.isVisible)
    }

    @Test func onlyTheLatestCompletionTimerCounts() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        _ = scenario.machine.activityCountChanged(to: 1, now: ms(1600))
        #expect(
            scenario.machine.activityCountChanged(to: 0, now: ms(1650)) == [
                .armTimer(.completion, deadline: ms(1850), generation: 3),
                .publishState(.delayingEnd),
            ]
        )
        #expect(scenario.machine.timerFired(.completion, generation: 2, now: ms(1700)) == [])
        #expect(scenario.machine.state == .delayingEnd)
        #expect(
            scenario.machine.timerFired(.completion, generation: 3, now: ms(1850)) == hiding
        )
    }

    @Test func activationTimerCancelledByDisablingIsIgnoredAfterReEnabling() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        _ = scenario.machine.enabledChanged(false, now: ms(100))
        _ = scenario.machine.enabledChanged(true, now: ms(200))
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) == [])
        #expect(scenario.machine.state == .delayingStart)
        #expect(
            scenario.machine.timerFired(.activation, generation: 2, now: ms(1200)) == showing
        )
    }

    @Test func timerReArmedByADelayChangeIgnoresItsOldGeneration() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.delaysChanged(activation: .seconds(2), completion: .milliseconds(200), now: ms(500)) == [
                .armTimer(.activation, deadline: ms(2000), generation: 2)
            ]
        )
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) == [])
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 2, now: ms(2000)) != [])
        #expect(scenario.machine.state == .active)
    }

    @Test func lateTimerStillFires() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.timerFired(.completion, generation: 2, now: ms(9000)) == hiding
        )
    }

    @Test func earlyActivationTimerIsReArmedForItsDeadline() {
        var scenario = ActivityIndicatorScenario(.delayingStart)
        #expect(
            scenario.machine.timerFired(.activation, generation: 1, now: ms(999)) == [
                .armTimer(.activation, deadline: ms(1000), generation: 2)
            ]
        )
        #expect(scenario.machine.state == .delayingStart)
        #expect(scenario.machine.timerFired(.activation, generation: 1, now: ms(1000)) == [])
        #expect(
            scenario.machine.timerFired(.activation, generation: 2, now: ms(1000)) == showing
        )
    }

    @Test func earlyCompletionTimerIsReArmedForItsDeadline() {
        var scenario = ActivityIndicatorScenario(.delayingEnd)
        #expect(
            scenario.machine.timerFired(.completion, generation: 2, now: ms(1600)) == [
                .armTimer(.completion, deadline: ms(1700), generation: 3)
            ]
        )
        #expect(scenario.machine.isVisible)
        #expect(scenario.machine.timerFired(.completion, generation: 3, now: ms(1700)) != [])
        #expect(!scenario.machine.isVisible)
    }

    @Test func generationsNeverRepeat() {
        var machine = Machine(activationDelay: .milliseconds(10), completionDelay: .milliseconds(10))
        var seen: Set<UInt64> = []
        var now = 0
        for _ in 0..<100 {
            for action in machine.activityCountChanged(to: 1, now: ms(now)) {
                if case .armTimer(_, _, let generation) = action { #expect(seen.insert(generation).inserted) }
            }
            now += 10
            _ = machine.timerFired(.activation, generation: UInt64(seen.count), now: ms(now))
            for action in machine.activityCountChanged(to: 0, now: ms(now)) {
                if case .armTimer(_, _, let generation) = action { #expect(seen.insert(generation).inserted) }
            }
            now += 10
            _ = machine.timerFired(.completion, generation: UInt64(seen.count), now: ms(now))
            #expect(machine.state == .notActive)
        }
        #expect(seen.count == 200)
    }
}
