import HaulCore
import HaulTestSupport
import Testing

/// Long random sequences of events, driven as a well-behaved owner would (the engine reports only for a transfer in
/// flight, a back-off is reported over once), checking after every event that signals come exactly once per real
/// change and that the owner is never asked to do something impossible. Serialized: CPU-bound cases side by side
/// would hold both cooperative threads of a 2-core machine.
@Suite("Transfer task lifecycle invariants", .serialized, .timeLimit(.minutes(2)))
struct TransferTaskInvariantTests {
    @Test(arguments: 1...20)
    func randomSequencesKeepTheInvariants(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var owner = OwnerModel(machine: OwnerModel.randomMachine(using: &generator))
        for _ in 0..<400 {
            owner.step(using: &generator)
            if owner.machine.state == .completed && Bool.random(using: &generator) {
                owner = OwnerModel(machine: OwnerModel.randomMachine(using: &generator), now: owner.now)
            }
        }
    }
}

/// What the owner knows: whether a transfer is in flight and has been asked to stop, and which back-off it waits out.
private struct OwnerModel {
    var machine: TaskMachine
    var now = 0
    var inFlight = false
    var stopRequested = false
    /// The back-off the machine asked for, until the owner reports it over (or the task leaves running).
    var waiting: TestInstant?

    static func randomMachine(using generator: inout SplitMix64) -> TaskMachine {
        let maxRetries = UInt32.random(in: 0...3, using: &generator)
        switch Int.random(in: 0...4, using: &generator) {
        case 0: return TaskMachine(restoring: .running, outcome: nil, maxRetries: maxRetries)
        case 1: return TaskMachine(restoring: .suspended, outcome: nil, maxRetries: maxRetries)
        case 2: return TaskMachine(restoring: .canceling, outcome: nil, maxRetries: maxRetries)
        default: return TaskMachine(maxRetries: maxRetries)
        }
    }

    mutating func step(using generator: inout SplitMix64) {
        now += Int.random(in: 0...700, using: &generator)
        let before = Before(machine)
        let at = ms(now)
        let actions: [TaskMachine.Action]
        switch Int.random(in: 0...10, using: &generator) {
        case 0:
            actions = machine.start(now: ms(now))
        case 1:
            actions = command(before.state) { try $0.suspend(now: at) }
        case 2:
            actions = command(before.state) { try $0.resume(now: at) }
        case 3:
            actions = command(before.state) { try $0.cancel(now: at) }
        case 4 where inFlight:
            inFlight = false
            actions = machine.transferSucceeded(now: ms(now))
        case 5 where inFlight:
            inFlight = false
            let failure: TransferFailure =
                Bool.random(using: &generator) ? .network("reset") : .http(status: 403)
            actions = machine.transferFailed(failure, now: ms(now))
        case 6 where inFlight && stopRequested:
            inFlight = false
            actions = machine.transferStopped(now: ms(now))
        case 7 where waiting != nil:
            let deadline = waiting!
            waiting = nil
            now = max(now, Int(deadline.offset / .milliseconds(1)))
            actions = machine.retryDue(now: deadline)
        case 8 where waiting == nil:
            actions = machine.retryDue(now: ms(now))
            #expect(actions == [], "a back-off that is not waited out does nothing")
        case 9:
            do {
                actions = try machine.retry(now: at)
            } catch {
                #expect(before.state == .completed && [.success, cancelledOutcome].contains(before.outcome))
                actions = []
            }
        default:
            return
        }
        perform(actions)
        // The owner forgets a back-off once the task no longer runs (suspended, cancelled).
        if machine.state != .running { waiting = nil }
        check(actions, before: before)
    }

    /// A client command, which must throw exactly when the task has completed.
    private mutating func command(
        _ state: TransferTaskState,
        _ body: (inout TaskMachine) throws -> [TaskMachine.Action]
    ) -> [TaskMachine.Action] {
        do {
            let actions = try body(&machine)
            #expect(state != .completed)
            return actions
        } catch {
            #expect(state == .completed)
            #expect(error as? TaskCommandError == .taskCompleted)
            return []
        }
    }

    private mutating func perform(_ actions: [TaskMachine.Action]) {
        for action in actions {
            switch action {
            case .startTransfer:
                #expect(!inFlight, "never two transfers at once")
                #expect(waiting == nil, "never during a back-off")
                inFlight = true
                stopRequested = false
            case .stopTransfer:
                #expect(inFlight && !stopRequested, "stop only what runs, once")
                stopRequested = true
            case .waitToRetry(let deadline):
                #expect(waiting == nil && !inFlight, "one back-off at a time, with nothing in flight")
                waiting = deadline
            case .removePartialFile, .persist, .publishState, .emitDidResume, .emitDidSuspend, .emitDidComplete:
                break
            }
        }
    }

    /// What the machine showed before an event.
    struct Before {
        var state: TransferTaskState
        var outcome: TransferOutcome?

        init(_ machine: TaskMachine) {
            state = machine.state
            outcome = machine.outcome
        }
    }

    private func check(_ actions: [TaskMachine.Action], before: Before) {
        let state = machine.state
        let changed = state != before.state
        let published = actions.compactMap { action -> TransferTaskState? in
            if case .publishState(let published) = action { published } else { nil }
        }
        #expect(published == (changed ? [state] : []), "publishState once per real change: \(actions)")
        let recorded = changed || machine.outcome != before.outcome
        #expect(count(.persist, in: actions) == (recorded ? 1 : 0))
        let resumed = (before.state == .suspended || before.state == .completed) && state == .running
        #expect(count(.emitDidResume, in: actions) == (resumed ? 1 : 0))
        #expect(count(.emitDidSuspend, in: actions) == (before.state == .running && state == .suspended ? 1 : 0))
        let completions = actions.filter { if case .emitDidComplete = $0 { true } else { false } }
        let justCompleted = before.state != .completed && state == .completed
        #expect(completions == (justCompleted ? [.emitDidComplete(machine.outcome!)] : []))
        let removes = justCompleted && machine.outcome != .success
        #expect(count(.removePartialFile, in: actions) == (removes ? 1 : 0))

        switch state {
        case .running:
            #expect(inFlight || waiting != nil || machine.attempt == 0, "only a restored task not yet started is idle")
        case .suspended:
            #expect(waiting == nil)
            #expect(!inFlight || stopRequested)
        case .canceling:
            #expect(waiting == nil)
            #expect(inFlight && stopRequested || machine.attempt == 0, "only a restored cancel has nothing to stop")
        case .completed:
            #expect(waiting == nil && !inFlight)
        }
    }

    private func count(_ action: TaskMachine.Action, in actions: [TaskMachine.Action]) -> Int {
        actions.filter { $0 == action }.count
    }
}
