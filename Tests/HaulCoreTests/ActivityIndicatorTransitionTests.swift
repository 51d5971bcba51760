import HaulCore
import Testing

/// Every transition of the activity indicator's `State` (`dbus/org.haul.Haul1.xml`), as sequences of events and the
/// exact actions they must produce.
@Suite("Activity indicator transitions", .timeLimit(.minutes(2)))
struct ActivityIndicatorTransitionTests {
    /// Round delays keep the timelines readable: activation 1 s, completion 200 ms.
    static func makeMachine() -> Machine {
        Machine(activationDelay: .seconds(1), completionDelay: .milliseconds(200))
    }

    @Test func startsNotActiveHiddenAndEnabledWithAFDefaults() {
        let machine = Machine()
        #expect(machine.state == .notActive)
        #expect(!machine.isVisible)
        #expect(machine.activityCount == 0)
        #expect(machine.isEnabled)
        #expect(machine.activationDelay == .seconds(1))
        #expect(machine.completionDelay == .milliseconds(170))
    }

    @Test func notActiveToDelayingStartWhenActivityStarts() {
        var machine = Self.makeMachine()
        #expect(
            machine.activityCountChanged(to: 1, now: ms(0)) == [
                .armTimer(.activation, deadline: ms(1000), generation: 1),
                .publishState(.delayingStart),
            ]
        )
        #expect(machine.state == .delayingStart)
        #expect(!machine.isVisible)
        #expect(machine.activityCount == 1)
    }

    @Test func notActiveStaysWithoutActivity() {
        var machine = Self.makeMachine()
        #expect(machine.activityCountChanged(to: 0, now: ms(0)) == [])
        #expect(machine.state == .notActive)
    }

    @Test func defaultActivationDelayArmsOneSecondAhead() {
        var machine = Machine()
        #expect(
            machine.activityCountChanged(to: 3, now: ms(500)) == [
                .armTimer(.activation, deadline: ms(1500), generation: 1),
                .publishState(.delayingStart),
            ]
        )
    }

    @Test func delayingStartIgnoresEveryCountChange() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        for (step, count) in [2, 0, 5, 0, 1].enumerated() {
            #expect(machine.activityCountChanged(to: UInt32(count), now: ms(100 * (step + 1))) == [])
            #expect(machine.state == .delayingStart)
            #expect(machine.activityCount == UInt32(count))
        }
    }

    @Test func activationTimerWithActivityGoesActiveAndShows() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        #expect(machine.timerFired(.activation, generation: 1, now: ms(1000)) == showing)
        #expect(machine.state == .active)
        #expect(machine.isVisible)
    }

    @Test func activationTimerWithoutActivityGoesNotActiveWithoutShowing() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.activityCountChanged(to: 0, now: ms(300))
        #expect(machine.timerFired(.activation, generation: 1, now: ms(1000)) == [.publishState(.notActive)])
        #expect(machine.state == .notActive)
        #expect(!machine.isVisible)
    }

    @Test func shortBurstInsideTheActivationDelayNeverShows() {
        var machine = Self.makeMachine()
        var actions: [Machine.Action] = []
        actions += machine.activityCountChanged(to: 1, now: ms(0))
        actions += machine.activityCountChanged(to: 0, now: ms(400))
        actions += machine.activityCountChanged(to: 2, now: ms(500))
        actions += machine.activityCountChanged(to: 0, now: ms(900))
        actions += machine.timerFired(.activation, generation: 1, now: ms(1000))
        #expect(!actions.contains(.setVisible(true)))
        #expect(!actions.contains(.setVisible(false)))
        #expect(machine.state == .notActive)
    }

    @Test func activeToDelayingEndWhenActivityStops() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        #expect(
            machine.activityCountChanged(to: 0, now: ms(1500)) == [
                .armTimer(.completion, deadline: ms(1700), generation: 2),
                .publishState(.delayingEnd),
            ]
        )
        #expect(machine.state == .delayingEnd)
        #expect(machine.isVisible, "the indicator stays up through the completion delay")
    }

    @Test func activeIgnoresNonZeroCountChanges() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        #expect(machine.activityCountChanged(to: 4, now: ms(1100)) == [])
        #expect(machine.activityCountChanged(to: 1, now: ms(1200)) == [])
        #expect(machine.activityCountChanged(to: 1, now: ms(1300)) == [])
        #expect(machine.state == .active)
    }

    @Test func delayingEndBackToActiveCancelsTheCompletionTimerWithoutBlinking() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        _ = machine.activityCountChanged(to: 0, now: ms(1500))
        #expect(
            machine.activityCountChanged(to: 1, now: ms(1600)) == [.cancelTimer(.completion), .publishState(.active)]
        )
        #expect(machine.state == .active)
        #expect(machine.isVisible)
    }

    @Test func delayingEndIgnoresAZeroCount() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        _ = machine.activityCountChanged(to: 0, now: ms(1500))
        #expect(machine.activityCountChanged(to: 0, now: ms(1550)) == [])
        #expect(machine.state == .delayingEnd)
    }

    @Test func completionTimerGoesNotActiveAndHides() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        _ = machine.activityCountChanged(to: 0, now: ms(1500))
        #expect(machine.timerFired(.completion, generation: 2, now: ms(1700)) == hiding)
        #expect(machine.state == .notActive)
        #expect(!machine.isVisible)
    }

    @Test func burstsInsideTheCompletionDelayNeverBlink() {
        var machine = Self.makeMachine()
        var actions: [Machine.Action] = []
        actions += machine.activityCountChanged(to: 1, now: ms(0))
        actions += machine.timerFired(.activation, generation: 1, now: ms(1000))
        // Three quick gaps, each shorter than the completion delay.
        var now = 1000
        for _ in 0..<3 {
            now += 150
            actions += machine.activityCountChanged(to: 0, now: ms(now))
            now += 150
            actions += machine.activityCountChanged(to: 1, now: ms(now))
        }
        #expect(actions.filter { if case .setVisible = $0 { true } else { false } } == [.setVisible(true)])
        #expect(machine.state == .active)
    }

    @Test func fullCyclePublishesEachChangeOnce() {
        var machine = Self.makeMachine()
        var actions: [Machine.Action] = []
        actions += machine.activityCountChanged(to: 1, now: ms(0))
        actions += machine.activityCountChanged(to: 2, now: ms(100))
        actions += machine.timerFired(.activation, generation: 1, now: ms(1000))
        actions += machine.activityCountChanged(to: 1, now: ms(1200))
        actions += machine.activityCountChanged(to: 0, now: ms(1400))
        actions += machine.timerFired(.completion, generation: 2, now: ms(1600))
        #expect(
            actions == [
                .armTimer(.activation, deadline: ms(1000), generation: 1),
                .publishState(.delayingStart),
                .publishState(.active),
                .setVisible(true),
                .armTimer(.completion, deadline: ms(1600), generation: 2),
                .publishState(.delayingEnd),
                .publishState(.notActive),
                .setVisible(false),
            ]
        )
    }

    @Test func aNewCycleAfterCompletionStartsFromDelayingStartWithAFreshGeneration() {
        var machine = Self.makeMachine()
        _ = machine.activityCountChanged(to: 1, now: ms(0))
        _ = machine.timerFired(.activation, generation: 1, now: ms(1000))
        _ = machine.activityCountChanged(to: 0, now: ms(1500))
        _ = machine.timerFired(.completion, generation: 2, now: ms(1700))
        #expect(
            machine.activityCountChanged(to: 1, now: ms(2000)) == [
                .armTimer(.activation, deadline: ms(3000), generation: 3),
                .publishState(.delayingStart),
            ]
        )
    }

    @Test func zeroDelaysArmTimersThatAreDueImmediately() {
        var machine = Machine(activationDelay: .zero, completionDelay: .zero)
        #expect(
            machine.activityCountChanged(to: 1, now: ms(10)) == [
                .armTimer(.activation, deadline: ms(10), generation: 1),
                .publishState(.delayingStart),
            ]
        )
        #expect(machine.timerFired(.activation, generation: 1, now: ms(10)) == showing)
    }

    @Test func delaysAreClampedIntoRange() {
        let machine = Machine(activationDelay: .seconds(-5), completionDelay: .seconds(3600))
        #expect(machine.activationDelay == .zero)
        #expect(machine.completionDelay == .seconds(60))
        #expect(Machine.maximumDelay == .seconds(60))
    }
}
