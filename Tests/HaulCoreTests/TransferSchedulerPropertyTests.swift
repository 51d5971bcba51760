import HaulCore
import HaulTestSupport
import Testing

/// Long random sequences of events, driven as the daemon will drive the scheduler (attempts report once, stops are
/// reported, timers fire at their deadlines with the generation armed), checking after every event that the
/// scheduler's decisions follow the rules, recomputed here independently. Serialized, like every CPU-bound random suite, so that it
/// never holds both cooperative threads of a 2-core machine.
@Suite("Transfer scheduler properties", .serialized, .timeLimit(.minutes(2)))
struct TransferSchedulerPropertyTests {
    @Test(arguments: 1...16 as ClosedRange<UInt64>)
    func randomEventSequencesFollowTheRules(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var owner = SchedulerOwner()
        for step in 0..<2000 {
            owner.context = "seed \(seed) step \(step)"
            owner.step(using: &random)
        }
        #expect(owner.starts > 100, "seed \(seed): the sequence should exercise the scheduler")
        #expect(owner.reasonsSeen == Set(WaitingFor.allCases), "seed \(seed): \(owner.reasonsSeen)")
    }
}

/// The owner as the daemon will be: it knows which attempts are in flight and which were asked to stop, the timer it
/// holds and the reasons it published.
private struct SchedulerOwner {
    var scheduler = Scheduler(maxRunningTasks: 3)
    var now = 0
    /// Attempts in flight, and whether each was asked to stop.
    var inFlight: [UInt32: Bool] = [:]
    var published: [UInt32: WaitingFor] = [:]
    var timer: (deadline: TestInstant, generation: UInt64)?
    var issuedGenerations: Set<UInt64> = []
    var lastID: UInt32 = 0
    var starts = 0
    var reasonsSeen: Set<WaitingFor> = []
    var context = ""

    var known: [UInt32] { scheduler.queueOrder }

    mutating func step(using random: inout SplitMix64) {
        let at = ms(now)
        let roll = Int.random(in: 0..<100, using: &random)
        let anyTask = known.randomElement(using: &random)
        let running = scheduler.runningTasks.randomElement(using: &random)
        let stopping = inFlight.filter(\.value).keys.sorted().randomElement(using: &random)
        switch roll {
        case 0..<14 where known.count < 16:
            // Few enough tasks that slots, priorities and every reason meet often.
            lastID += 1
            let priority: TransferPriority = Bool.random(using: &random) ? .foreground : .background
            let allowMetered = Int.random(in: 0..<4, using: &random) == 0
                ? !priority.allowsMeteredByDefault : priority.allowsMeteredByDefault
            perform(scheduler.add(
                lastID, priority: priority, allowMetered: allowMetered,
                isLoopback: Int.random(in: 0..<5, using: &random) == 0,
                isSuspended: Int.random(in: 0..<5, using: &random) == 0, now: at
            ))
        case 14..<19 where anyTask != nil:
            perform(scheduler.suspend(anyTask!, now: at))
        case 19..<26 where anyTask != nil:
            perform(scheduler.resume(anyTask!, now: at))
        case 26..<29 where anyTask != nil:
            perform(scheduler.remove(anyTask!, now: at))
        case 29..<37 where running != nil:
            inFlight[running!] = nil
            perform(scheduler.completed(running!, now: at))
        case 37..<47 where running != nil:
            let id = running!
            let delay: Duration? =
                scheduler.failureSpendsRetry(id) ? .milliseconds(Int.random(in: 0...4000, using: &random)) : nil
            inFlight[id] = nil
            perform(scheduler.attemptFailed(id, retryDelay: delay, now: at))
        case 47..<57 where stopping != nil:
            let id = stopping!
            #expect(!scheduler.failureSpendsRetry(id) || scheduler.task(id) == nil, "\(context)")
            inFlight[id] = nil
            perform(
                Bool.random(using: &random)
                    ? scheduler.attemptStopped(id, now: at)
                    : scheduler.attemptFailed(id, retryDelay: .seconds(1), now: at)
            )
        case 57..<60 where anyTask != nil:
            let priority: TransferPriority = Bool.random(using: &random) ? .foreground : .background
            perform(scheduler.priorityChanged(anyTask!, to: priority, now: at))
        case 60..<62 where anyTask != nil:
            perform(scheduler.urlChanged(anyTask!, isLoopback: Bool.random(using: &random), now: at))
        case 62..<66:
            perform(scheduler.networkChanged(to: NetworkState.allCases.randomElement(using: &random)!, now: at))
        case 66..<69:
            perform(scheduler.meteredChanged(to: Bool.random(using: &random), now: at))
        case 69..<72:
            perform(scheduler.powerSaverChanged(to: Bool.random(using: &random), now: at))
        case 72..<75:
            perform(scheduler.prepareForSleep(Int.random(in: 0..<3, using: &random) == 0, now: at))
        case 75..<78:
            perform(scheduler.maxRunningTasksChanged(to: UInt32.random(in: 0...4, using: &random), now: at))
        case 78..<80:
            // A timer the owner could not cancel in time: a generation no longer armed must do nothing.
            if let stale = issuedGenerations.filter({ $0 != timer?.generation }).randomElement(using: &random) {
                #expect(scheduler.timerFired(generation: stale, now: at) == [], "\(context)")
            }
        default:
            advance(by: Int.random(in: 0...1500, using: &random))
        }
    }

    /// Moves time forward, firing the timer at its deadline when it falls due on the way.
    mutating func advance(by milliseconds: Int) {
        let target = now + milliseconds
        while let armed = timer, armed.deadline <= ms(target) {
            timer = nil
            now = max(now, Int((armed.deadline.offset / .milliseconds(1)).rounded(.up)))
            perform(scheduler.timerFired(generation: armed.generation, now: ms(now)))
        }
        now = target
    }

    mutating func perform(_ actions: [Scheduler.Action]) {
        var startedNow: [UInt32] = []
        for action in actions {
            switch action {
            case .startAttempt(let id):
                #expect(inFlight[id] == nil, "\(context): \(id) started twice")
                inFlight[id] = false
                startedNow.append(id)
                starts += 1
            case .stopAttempt(let id):
                #expect(inFlight[id] == false, "\(context): stopped \(id), which is not transferring")
                inFlight[id] = true
            case .publishWaitingFor(let id, let reason):
                #expect(published[id] != reason, "\(context): \(id) published \(String(describing: reason)) twice")
                published[id] = reason
                if let reason { reasonsSeen.insert(reason) }
            case .armTimer(let deadline, let generation):
                #expect(!issuedGenerations.contains(generation), "\(context): generation reused")
                #expect(deadline > ms(now), "\(context): a timer for the past")
                issuedGenerations.insert(generation)
                timer = (deadline, generation)
            case .cancelTimer:
                #expect(timer != nil, "\(context): cancelled a timer that is not armed")
                timer = nil
            case .saveQueueOrder:
                break
            }
        }
        for id in Set(published.keys).subtracting(known) { published[id] = nil }
        checkRules(startedNow: startedNow)
    }

    /// The scheduling rules, recomputed from what the scheduler exposes.
    func checkRules(startedNow: [UInt32]) {
        let max = scheduler.maxRunningTasks
        #expect(inFlight.count == scheduler.attemptsInFlight, "\(context)")
        if !startedNow.isEmpty && max > 0 {
            #expect(scheduler.attemptsInFlight <= Int(max), "\(context): over MaxRunningTasks")
        }
        let order = known
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let rank = { (id: UInt32) -> (TransferPriority, Int) in
            (scheduler.task(id)?.priority ?? .background, position[id] ?? .max)
        }
        var expectedTimer: TestInstant?
        for id in order {
            guard let task = scheduler.task(id) else { continue }
            #expect(published[id] == task.waitingFor, "\(context): \(id)")
            #expect((task.attempt != .idle) == (inFlight[id] != nil), "\(context): \(id)")
            if let deadline = task.retryDeadline {
                #expect(deadline > ms(now), "\(context): \(id) has a back-off that ran out")
                expectedTimer = expectedTimer.map { min($0, deadline) } ?? deadline
            }
            let blocking = Self.blockingReason(task, scheduler)
            switch (task.wantsToRun, task.attempt) {
            case (false, _):
                #expect(task.waitingFor == nil, "\(context): \(id) is suspended")
            case (true, .running):
                #expect(task.waitingFor == nil, "\(context): \(id) is running")
                let mayGoOn = blocking == nil || blocking == .network
                #expect(mayGoOn, "\(context): \(id) kept running despite \(String(describing: blocking))")
            case (true, .stopping):
                #expect(task.waitingFor == (blocking ?? .slot), "\(context): \(id)")
            case (true, .idle):
                #expect(task.waitingFor == (blocking ?? .slot), "\(context): \(id)")
            }
            if task.isLoopback, let reason = task.waitingFor {
                #expect(![.network, .unmetered, .power].contains(reason), "\(context): loopback \(id) waits \(reason)")
            }
            // A stopping attempt waits for its own slot; an idle task waits `slot` only when all are taken, and
            // only behind every task started meanwhile.
            if task.waitingFor == .slot, task.attempt == .idle {
                #expect(max > 0 && scheduler.attemptsInFlight >= Int(max), "\(context): \(id) waits for a free slot")
                for other in startedNow {
                    #expect(rank(other) < rank(id), "\(context): \(other) started before \(id)")
                }
            }
        }
        #expect(timer?.deadline == expectedTimer, "\(context)")
    }

    /// Why `task` may not start, slots aside, in the contract's order of precedence.
    static func blockingReason(_ task: Scheduler.ScheduledTask, _ scheduler: Scheduler) -> WaitingFor? {
        var reasons: [WaitingFor] = []
        if scheduler.isPreparingForSleep { reasons.append(.sleep) }
        if !task.isLoopback && [.offline, .portal].contains(scheduler.networkState) { reasons.append(.network) }
        if !task.isLoopback && scheduler.isMetered && !task.allowMetered { reasons.append(.unmetered) }
        if !task.isLoopback && scheduler.isPowerSaver && task.priority == .background { reasons.append(.power) }
        if task.retryDeadline != nil { reasons.append(.retry) }
        return reasons.min()
    }
}

