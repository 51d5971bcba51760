import HaulCore
import Testing

/// The limiter's answers one by one: permits, deadlines, limits and tasks coming and going.
@Suite("Rate limiter", .timeLimit(.minutes(2)))
struct RateLimiterTests {
    @Test func withoutLimitsEverythingIsUnlimited() {
        var limiter = Limiter(now: ms(0))
        limiter.add(1, limit: 0, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(0)) == .unlimited)
        limiter.consumed(10 * mebibyte, by: 1, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(0)) == .unlimited)
        #expect(limiter.globalLimit == 0 && limiter.limit(of: 1) == 0)
        #expect(limiter.permit(for: 2, now: ms(0)) == .unlimited, "an unknown task is added without a limit")
        #expect(limiter.limit(of: 2) == 0)
    }

    /// A task's own limit: once 250 ms of it has flowed in, and at the next instant of the 50 ms grid, a grant of
    /// everything that flowed in; then it waits.
    @Test func anOwnLimitGrantsWhatFlowedInOnTheGrid() {
        var limiter = Limiter(now: ms(0))
        limiter.add(1, limit: 64 * 1024, now: ms(0))
        #expect(limiter.limit(of: 1) == 65_536)
        guard case .wait(let first) = limiter.permit(for: 1, now: ms(0)) else {
            Issue.record("an empty bucket must wait")
            return
        }
        #expect(first == ms(300), "250 ms of 64 KiB/s, then the next 50 ms")
        #expect(limiter.permit(for: 1, now: first) == .read(maxBytes: 19_660))
        limiter.consumed(19_660, by: 1, now: first)
        guard case .wait = limiter.permit(for: 1, now: first) else {
            Issue.record("a spent bucket must wait")
            return
        }
    }

    /// After a pause, no more than 400 ms' worth is granted at once.
    @Test func savedUpTokensStopAt400Milliseconds() {
        var limiter = Limiter(now: ms(0))
        limiter.add(1, limit: 100_000, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(60_000)) == .read(maxBytes: 40_000))
    }

    @Test func readingMoreThanGrantedIsOwedAndWaitedOut() {
        var limiter = Limiter(now: ms(0))
        limiter.add(1, limit: 100_000, now: ms(0))
        _ = limiter.permit(for: 1, now: ms(1000))
        limiter.consumed(140_000, by: 1, now: ms(1000))
        // 100 000 bytes owed beyond the 40 000 saved up: a second to pay, then a grant's worth to gather.
        guard case .wait(let deadline) = limiter.permit(for: 1, now: ms(1000)) else {
            Issue.record("a debt must be waited out")
            return
        }
        #expect(deadline == ms(2000), "never more than a second at a time")
        #expect(limiter.permit(for: 1, now: ms(2000)) == .wait(until: ms(2300)))
        #expect(limiter.permit(for: 1, now: ms(2300)) == .read(maxBytes: 30_000))
    }

    /// A debt of many grants (a task whose own limit is far below the global one read a large body part) is reserved
    /// in a few steps, not grant by grant.
    @Test func aLargeDebtIsReservedInAFewSteps() {
        var limiter = Limiter(globalLimit: 1 << 40, now: ms(0))
        limiter.add(1, limit: 4, now: ms(0))
        limiter.consumed(Int.max, by: 1, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(1000)).isWait)
        #expect(limiter.permit(for: 1, now: ms(2000)).isWait)
    }

    @Test func noWaitIsLongerThanASecond() {
        var limiter = Limiter(globalLimit: 1, now: ms(0))
        limiter.add(1, limit: 1, now: ms(0))
        limiter.consumed(1_000_000, by: 1, now: ms(0))
        for task: UInt32 in [1, 2] {
            guard case .wait(let deadline) = limiter.permit(for: task, now: ms(0)) else {
                Issue.record("task \(task) must wait")
                continue
            }
            #expect(deadline <= ms(1000), "task \(task)")
        }
    }

    /// The global bucket is shared out in rounds: the tasks that claimed a share wait for the same instant, and get
    /// equal shares whoever asks first.
    @Test func oneRoundsClaimsAreServedTogether() {
        var limiter = Limiter(globalLimit: 64 * 1024, now: ms(0))
        for task: UInt32 in 1...4 { limiter.add(task, limit: 0, now: ms(0)) }
        for task: UInt32 in 1...4 {
            #expect(limiter.permit(for: task, now: ms(0)) == .wait(until: ms(250)), "task \(task): the first round")
        }
        #expect(limiter.permit(for: 4, now: ms(200)) == .wait(until: ms(250)), "nobody reads before the round")
        // 250 ms of the limit, in four equal shares.
        for task: UInt32 in [4, 1, 3, 2] {
            #expect(limiter.permit(for: task, now: ms(250)) == .read(maxBytes: 4096), "task \(task)")
        }
        // A task that spent its share waits for the next round, with the others.
        limiter.consumed(4096, by: 4, now: ms(260))
        #expect(limiter.permit(for: 4, now: ms(260)) == .wait(until: ms(500)))
    }

    /// A removed task's share, not yet read, goes back to the bucket for the others.
    @Test func removingATaskGivesItsShareBack() {
        var limiter = Limiter(globalLimit: 64 * 1024, now: ms(0))
        limiter.add(1, limit: 0, now: ms(0))
        limiter.add(2, limit: 0, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(0)) == .wait(until: ms(250)))
        #expect(limiter.permit(for: 2, now: ms(0)) == .wait(until: ms(250)))
        #expect(limiter.permit(for: 1, now: ms(250)) == .read(maxBytes: 8192))
        limiter.remove(2, now: ms(251))
        #expect(limiter.limit(of: 2) == nil)
        guard case .read = limiter.permit(for: 3, now: ms(252)) else {
            Issue.record("task 2's share, given back, is there to take")
            return
        }
    }

    @Test func removingTheGlobalLimitFreesEveryone() {
        var limiter = Limiter(globalLimit: 1000, now: ms(0))
        limiter.add(1, limit: 0, now: ms(0))
        #expect(limiter.permit(for: 1, now: ms(0)).isWait)
        limiter.setGlobalLimit(0, now: ms(10))
        #expect(limiter.globalLimit == 0)
        #expect(limiter.permit(for: 1, now: ms(10)) == .unlimited)
        limiter.setGlobalLimit(2000, now: ms(20))
        #expect(limiter.globalLimit == 2000)
        #expect(limiter.permit(for: 1, now: ms(20)).isWait)
    }

    @Test func addingAKnownTaskChangesItsLimit() {
        var limiter = Limiter(now: ms(0))
        limiter.add(1, limit: 5000, now: ms(0))
        limiter.add(1, limit: 0, now: ms(0))
        #expect(limiter.limit(of: 1) == 0)
        #expect(limiter.permit(for: 1, now: ms(0)) == .unlimited)
        limiter.setLimit(7000, of: 2, now: ms(0))
        #expect(limiter.limit(of: 2) == 7000)
    }

    /// Limits come from the bus (a `t`): any value must be safe, however absurd.
    @Test(arguments: [UInt64(1), 3, 511, 513, 1 << 53, UInt64.max - 1, UInt64.max])
    func anyLimitIsSafe(_ limit: UInt64) {
        var limiter = Limiter(globalLimit: limit, now: ms(0))
        limiter.add(1, limit: limit, now: ms(0))
        #expect(limiter.globalLimit == limit && limiter.limit(of: 1) == limit)
        for step in 0..<50 {
            let now = ms(step * 100)
            if case .read(let maxBytes) = limiter.permit(for: 1, now: now) {
                #expect(maxBytes >= 1)
                limiter.consumed(maxBytes, by: 1, now: now)
            }
            limiter.consumed(Int.max, by: 1, now: now)
            limiter.consumed(-5, by: 1, now: now)
        }
        limiter.setGlobalLimit(limit / 2, now: ms(6000))
        limiter.setLimit(limit / 3, of: 1, now: ms(6000))
        _ = limiter.permit(for: 1, now: ms(6000))
    }
}

extension RateLimiter.Permit {
    var isWait: Bool {
        if case .wait = self { true } else { false }
    }
}
