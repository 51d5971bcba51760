import HaulCore
import HaulTestSupport
import Testing

/// An owner as the daemon will be: it keeps one scheduled timer per kind, fires due timers at their deadlines in
/// order, and publishes what the machine says. It checks every action against what it already knows.
struct SimulatedOwner {
    var machine = Machine(activationDelay: .milliseconds(300), completionDelay: .milliseconds(100))
    var now = ms(0)
    var timers: [ActivityIndicatorTimer: (deadline: TestInstant, generation: UInt64)] = [:]
    var issuedGenerations: [UInt64] = []
    var publishedState = ActivityIndicatorState.notActive
    var publishedVisible = false
    /// Every published state and visibility, with the instant it was published.
    var published: [(action: Machine.Action, at: TestInstant)] = []
    var visibilityChanges: Int {
        published.count { if case .setVisible = $0.action { true } else { false } }
    }
    var context = ""

    /// Executes `actions`; `mayReplaceTimers` is true only for events that may legitimately re-arm a running timer.
    mutating func perform(_ actions: [Machine.Action], mayReplaceTimers: Bool = false) {
        for action in actions {
            switch action {
            case .armTimer(let kind, let deadline, let generation):
                #expect(timers[kind] == nil || mayReplaceTimers, "\(context): \(kind) armed twice")
                #expect(deadline >= ms(0), "\(context): deadline before the origin")
                #expect(!issuedGenerations.contains(generation), "\(context): generation \(generation) reused")
                issuedGenerations.append(generation)
                timers[kind] = (deadline, generation)
            case .cancelTimer(let kind):
                #expect(timers[kind] != nil, "\(context): cancelled \(kind), which is not armed")
                timers[kind] = nil
            case .publishState(let state):
                #expect(state != publishedState, "\(context): state \(state) published twice")
                publishedState = state
                published.append((action, now))
            case .setVisible(let visible):
                #expect(visible != publishedVisible, "\(context): visibility \(visible) published twice")
                #expect(!visible || machine.activityCount > 0, "\(context): shown without activity")
                publishedVisible = visible
                published.append((action, now))
            }
        }
    }

    /// Moves time forward by `milliseconds`, firing every timer that falls due on the way, at its deadline.
    mutating func advance(by milliseconds: Int) {
        let target = now.advanced(by: .milliseconds(milliseconds))
        while let (kind, timer) = timers.filter({ $0.value.deadline <= target }).min(by: {
            $0.value.deadline < $1.value.deadline
        }) {
            timers[kind] = nil
            now = max(now, timer.deadline)
            perform(machine.timerFired(kind, generation: timer.generation, now: now))
        }
        now = target
    }

    func checkInvariants() {
        let state = machine.state
        #expect(publishedState == state, "\(context)")
        #expect(publishedVisible == machine.isVisible, "\(context)")
        #expect(machine.isVisible == (state == .active || state == .delayingEnd), "\(context)")
        #expect((timers[.activation] != nil) == (state == .delayingStart), "\(context): \(timers)")
        #expect((timers[.completion] != nil) == (state == .delayingEnd), "\(context): \(timers)")
        if !machine.isEnabled {
            #expect(state == .notActive, "\(context)")
        } else {
            switch state {
            case .notActive, .delayingEnd: #expect(machine.activityCount == 0, "\(context)")
            case .active: #expect(machine.activityCount > 0, "\(context)")
            case .delayingStart: break
            }
        }
    }
}

@Suite("Activity indicator properties", .timeLimit(.minutes(2)))
struct ActivityIndicatorPropertyTests {
    @Test(arguments: 1...24 as ClosedRange<UInt64>)
    func randomEventSequencesKeepEveryInvariant(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var owner = SimulatedOwner()
        for step in 0..<3000 {
            owner.context = "seed \(seed) step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let count = UInt32.random(in: 0...3, using: &random)
                owner.perform(owner.machine.activityCountChanged(to: count, now: owner.now))
            case 40..<80:
                owner.advance(by: Int.random(in: 0...400, using: &random))
            case 80..<86:
                // A timer the owner could not cancel in time: any generation no longer armed must do nothing.
                let armed = Set(owner.timers.values.map(\.generation))
                if let stale = owner.issuedGenerations.filter({ !armed.contains($0) }).randomElement(using: &random) {
                    let kind = ActivityIndicatorTimer.allCases.randomElement(using: &random)!
                    #expect(owner.machine.timerFired(kind, generation: stale, now: owner.now) == [], "\(owner.context)")
                }
            case 86..<89:
                // An early wake-up: the machine may only re-arm the same timer.
                if let (kind, timer) = owner.timers.first, owner.now < timer.deadline {
                    let actions = owner.machine.timerFired(kind, generation: timer.generation, now: owner.now)
                    #expect(actions.count == 1, "\(owner.context)")
                    owner.perform(actions, mayReplaceTimers: true)
                }
            case 89..<94:
                owner.perform(owner.machine.enabledChanged(Bool.random(using: &random), now: owner.now))
            default:
                let activation = Duration.milliseconds(Int.random(in: -50...600, using: &random))
                let completion = Duration.milliseconds(Int.random(in: -50...300, using: &random))
                owner.perform(
                    owner.machine.delaysChanged(activation: activation, completion: completion, now: owner.now),
                    mayReplaceTimers: true
                )
            }
            owner.checkInvariants()
        }
        #expect(owner.visibilityChanges > 10, "seed \(seed): the sequence should exercise the indicator")
    }

    /// With fixed delays and an owner whose timers fire on time, the indicator is shown exactly the activation delay
    /// after activity started, and each visible period lasts at least the completion delay: the anti-flicker promise.
    @Test(arguments: 100...111 as ClosedRange<UInt64>)
    func visibilityNeverFlickers(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var owner = SimulatedOwner()
        for step in 0..<3000 {
            owner.context = "seed \(seed) step \(step)"
            if Bool.random(using: &random) {
                let count = UInt32.random(in: 0...2, using: &random)
                owner.perform(owner.machine.activityCountChanged(to: count, now: owner.now))
            } else {
                owner.advance(by: Int.random(in: 0...250, using: &random))
            }
            owner.checkInvariants()
        }
        var delayingSince: TestInstant?
        var shownAt: TestInstant?
        for (action, at) in owner.published {
            switch action {
            case .publishState(.delayingStart):
                delayingSince = at
            case .setVisible(true):
                #expect(delayingSince.map { $0.duration(to: at) } == .milliseconds(300), "seed \(seed) at \(at)")
                shownAt = at
            case .setVisible(false):
                #expect(shownAt.map { $0.duration(to: at) >= .milliseconds(100) } == true, "seed \(seed) at \(at)")
            default:
                break
            }
        }
        #expect(owner.visibilityChanges > 10, "seed \(seed): the sequence should exercise the indicator")
    }
}
