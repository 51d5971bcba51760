import Foundation
import HaulCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct SegmentPlanTests {
    static let mib: Int64 = 1 << 20

    @Test func aFileIsSpreadOverTheConnectionsInHalves() {
        var plan = SegmentPlan(total: 16 * Self.mib)
        plan.spread(over: 4)
        #expect(plan.unfinished.count == 4)
        #expect(plan.segments.map(\.start).sorted() == [0, 4, 8, 12].map { $0 * Self.mib })
        #expect(plan.segments.allSatisfy { $0.end - $0.start == 4 * Self.mib })
    }

    @Test func nothingIsSplitBelowOneMebibyte() {
        var small = SegmentPlan(total: 3 * Self.mib / 2)
        small.spread(over: 16)
        #expect(small.segments.count == 1)
        var plan = SegmentPlan(total: 4 * Self.mib)
        plan.spread(over: 16)
        #expect(plan.segments.count == 4, "1 MiB halves at the least")
    }

    /// The split is counted from where a connection really is, so the half taken over is never fetched twice.
    @Test func aFreeConnectionTakesHalfOfTheLargestRemainder() throws {
        var plan = SegmentPlan(total: 10 * Self.mib)
        plan.spread(over: 2)
        let first = try #require(plan.segments.firstIndex { $0.start == 0 })
        let second = try #require(plan.segments.firstIndex { $0.start == 5 * Self.mib })
        plan.record(5 * Self.mib, in: second)
        plan.record(1 * Self.mib, in: first)
        #expect(plan.largest(among: [first, second]) == first)
        // Its connection is at 2 MiB although 1 MiB is recorded: half of the 3 MiB it has left goes.
        let cut = try #require(plan.cut(first, at: 2 * Self.mib))
        let split = plan.split(first, at: cut)
        let taken = try #require(split)
        #expect(plan.segments[taken] == .init(start: 7 * Self.mib / 2, end: 5 * Self.mib))
        #expect(plan.segments[first].end == 7 * Self.mib / 2)
        #expect(plan.bytesDone == 6 * Self.mib)
        #expect(SegmentPlan.restored(plan, total: 10 * Self.mib) == plan)
    }

    @Test func aCutNeverGoesBelowWhatIsDone() {
        var plan = SegmentPlan(total: 8 * Self.mib, done: 5 * Self.mib)
        #expect(plan.split(0, at: 4 * Self.mib) == nil)
        #expect(plan.cut(0, at: 7 * Self.mib) == nil, "half of 1 MiB is too small")
        #expect(plan.split(0, at: 6 * Self.mib) == 1)
    }

    @Test func progressIsRecordedPerSegmentAndCapped() {
        var plan = SegmentPlan(total: 4 * Self.mib, done: Self.mib)
        #expect(plan.bytesDone == Self.mib && plan.segments[0].next == Self.mib)
        plan.record(10 * Self.mib, in: 0)
        plan.record(5, in: 7)
        #expect(plan.isComplete && plan.bytesDone == 4 * Self.mib)
    }

    @Test func aDamagedPlanIsNotRestored() throws {
        var plan = SegmentPlan(total: 8 * Self.mib)
        plan.spread(over: 2)
        #expect(SegmentPlan.restored(plan, total: 9 * Self.mib) == nil)
        let gap = try JSONDecoder().decode(
            SegmentPlan.self,
            from: Data(#"{"total":10,"segments":[{"start":0,"end":4,"done":0},{"start":5,"end":10,"done":0}]}"#.utf8)
        )
        #expect(SegmentPlan.restored(gap, total: 10) == nil)
        let overDone = try JSONDecoder().decode(
            SegmentPlan.self, from: Data(#"{"total":10,"segments":[{"start":0,"end":10,"done":11}]}"#.utf8)
        )
        #expect(SegmentPlan.restored(overDone, total: 10) == nil)
    }
}
