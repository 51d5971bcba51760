import HaulCore
import HaulTestSupport
import Testing

/// Long random sequences of events, driven as a well-behaved owner would (an attempt reports once, after a stop or
/// by itself; the timer fires with the generation armed), checking after every event what the owner and clients may
/// rely on: at most `MaxRunningTasks` attempts in flight, never an attempt for a task that is not running, every
/// signal once per real change, each state published once when it changed, and a running count that never counts a
/// queued task. Serialized: CPU-bound cases run side by side would hold every cooperative thread of a small machine.
@Suite("Transfer queue invariants", .serialized, .timeLimit(.minutes(2)))
struct TransferQueueInvariantTests {
    @Test(arguments: 1...16)
    func randomSequencesKeepTheInvariants(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var owner = QueueOwner(maxRunningTasks: UInt32.random(in: 0...3, using: &generator))
        for _ in 0..<600 {
            owner.step(using: &generator)
        }
    }
}

/// What the owner knows: the attempts in flight (and whether each was asked to stop), the timer, and what it has
/// told clients.
private struct QueueOwner {
    var queue: Queue
    var now = 0
    var nextID: UInt32 = 1
    var inFlight: [UInt32: Bool] = [:]
    var timer: (deadline: TestInstant, generation: UInt64)?
    var shown: [UInt32: Queue.PublicState] = [:]
    var runningCount = 0

    init(maxRunningTasks: UInt32) {
        queue = Queue(maxRunningTasks: maxRunningTasks)
    }

    var ids: [UInt32] { Array(1..<nextID) }

    mutating func step(using generator: inout SplitMix64) {
        now += Int.random(in: 0...400, using: &generator)
        let at = ms(now)
        let before = Dictionary(uniqueKeysWithValues: ids.compactMap { id in
            queue.entry(id).map { (id, $0.lifecycle.state) }
        })
        let id = ids.randomElement(using: &generator) ?? 0
        var added: UInt32?
        let actions: [QueueAction]
        switch Int.random(in: 0...13, using: &generator) {
        case 0, 1:
            added = nextID
            nextID += 1
            let priority: TransferPriority = Bool.random(using: &generator) ? .foreground : .background
            actions = queue.add(
                added!, priority, loopback: Int.random(in: 0...3, using: &generator) == 0,
                maxRetries: UInt32.random(in: 0...2, using: &generator),
                suspended: Int.random(in: 0...3, using: &generator) == 0, at: at
            )
        case 2:
            actions = command { queue throws(TaskCommandError) in try queue.suspend(id, now: at) }
        case 3:
            actions = command { queue throws(TaskCommandError) in try queue.resume(id, now: at) }
        case 4:
            actions = command { queue throws(TaskCommandError) in try queue.cancel(id, now: at) }
        case 5:
            actions = command { queue throws(TaskCommandError) in try queue.retry(id, now: at) }
        case 6, 7, 8:
            guard let (attempt, stopAsked) = inFlight.randomElement(using: &generator) else { return }
            inFlight[attempt] = nil
            let end: Queue.AttemptEnd
            switch Int.random(in: 0...3, using: &generator) {
            case 0: end = .succeeded
            case 1: end = stopAsked ? .stopped : .failed(.network("reset"))
            case 2: end = .failed(.http(status: 404))
            default: end = stopAsked ? .stopped : .failed(.http(status: 503))
            }
            actions = queue.attemptEnded(attempt, end, now: at)
        case 9 where timer != nil:
            let armed = timer!
            timer = nil
            now = max(now, Int(armed.deadline.offset / .milliseconds(1)))
            actions = queue.timerFired(generation: armed.generation, now: armed.deadline)
        case 10:
            let state = NetworkState.allCases.randomElement(using: &generator)!
            actions = queue.networkChanged(to: state, metered: Bool.random(using: &generator), now: at)
        case 11:
            switch Int.random(in: 0...2, using: &generator) {
            case 0: actions = queue.powerSaverChanged(to: Bool.random(using: &generator), now: at)
            case 1: actions = queue.prepareForSleep(Bool.random(using: &generator), now: at)
            default: actions = queue.maxRunningTasksChanged(to: UInt32.random(in: 0...3, using: &generator), now: at)
            }
        case 12:
            let priority: TransferPriority = Bool.random(using: &generator) ? .foreground : .background
            actions = queue.priorityChanged(id, to: priority, now: at)
        case 13:
            if queue.forget(id) { shown[id] = nil }
            return
        default:
            return
        }
        if let added { shown[added] = queue.publicState(of: added) }
        perform(actions)
        check(actions, before: before)
    }

    /// A client command, which throws only on a completed task.
    private mutating func command(_ body: (inout Queue) throws(TaskCommandError) -> [QueueAction]) -> [QueueAction] {
        do {
            return try body(&queue)
        } catch {
            return []
        }
    }

    private mutating func perform(_ actions: [QueueAction]) {
        for action in actions {
            switch action {
            case .startAttempt(let id, _):
                #expect(inFlight[id] == nil, "never two attempts of a task at once")
                #expect(queue.entry(id)?.lifecycle.state == .running, "never an attempt for a task that does not run")
                inFlight[id] = false
                let limit = queue.scheduler.maxRunningTasks
                #expect(limit == 0 || inFlight.count <= Int(limit), "at most MaxRunningTasks attempts in flight")
            case .stopAttempt(let id):
                #expect(inFlight[id] == false, "stop only what runs, once")
                inFlight[id] = true
            case .publishState(let id, let state):
                #expect(shown[id] != state, "published only when it changed")
                shown[id] = state
            case .armTimer(let deadline, let generation):
                timer = (deadline, generation)
            case .cancelTimer:
                timer = nil
            case .runningCountChanged(let count):
                #expect(count != runningCount)
                runningCount = count
            case .removePartialFile(let id):
                #expect(inFlight[id] == nil, "never under a running attempt")
            case .persist, .emitDidResume, .emitDidSuspend, .emitDidComplete:
                break
            }
        }
    }

    private func check(_ actions: [QueueAction], before: [UInt32: TransferTaskState]) {
        for id in ids {
            guard let entry = queue.entry(id) else { continue }
            let state = entry.lifecycle.state
            let was = before[id]
            #expect(shown[id] == queue.publicState(of: id), "clients see the task as it stands")
            let resumes = actions.count { $0 == .emitDidResume(id) }
            let suspends = actions.count { $0 == .emitDidSuspend(id) }
            let completions = actions.count { if case .emitDidComplete(id, _) = $0 { true } else { false } }
            // A new task's first run is a resume too.
            let resumed = state == .running && was != .running
            #expect(resumes == (resumed ? 1 : 0), "TaskDidResume once per real change")
            #expect(suspends == (was == .running && state == .suspended ? 1 : 0), "TaskDidSuspend once")
            #expect(completions == (was != .completed && state == .completed ? 1 : 0), "TaskDidComplete once")
            if inFlight[id] == false {
                #expect(state == .running && queue.isTransferring(id), "an attempt not asked to stop transfers")
            }
            if queue.publicState(of: id)?.isQueued == true {
                #expect(!queue.isTransferring(id), "a queued task never counts as running")
            }
        }
        let transferring = inFlight.values.count { !$0 }
        #expect(runningCount == transferring, "the running count is the attempts transferring")
        #expect(queue.scheduler.runningTaskCount == transferring)
        #expect(queue.scheduler.attemptsInFlight == inFlight.count)
    }
}
