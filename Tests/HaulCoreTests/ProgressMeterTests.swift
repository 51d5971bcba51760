import HaulCore
import Testing

typealias TestMeter = ProgressMeter<TestInstant>

@Suite("Progress meter", .timeLimit(.minutes(2)))
struct ProgressMeterTests {
    @Test func aThousandRecordsInASecondPublishAtMostElevenTimes() {
        var meter = TestMeter()
        var publications = 0
        for millisecond in 0..<1000 {
            if meter.record(bytes: UInt64(millisecond + 1) * 100, now: ms(millisecond)) {
                publications += 1
            }
        }
        #expect(publications <= 11)
        #expect(publications == 10, "at 0, 100, …, 900 ms")
        #expect(meter.totalBytes == 100_000)
    }

    @Test func theFirstRecordPublishesAndLaterOnesWaitForTheInterval() {
        var meter = TestMeter()
        #expect(meter.trailingDeadline == nil)
        #expect(publications(&meter, [(10, 0)]) == [true])
        #expect(meter.trailingDeadline == nil)
        #expect(publications(&meter, [(20, 40)]) == [false])
        #expect(meter.trailingDeadline == ms(100), "what was held back may go out then")
        #expect(publications(&meter, [(30, 99), (40, 100)]) == [false, true])
        #expect(meter.trailingDeadline == nil)
    }

    @Test func flushSaysWhetherSomethingWasHeldBack() {
        var meter = TestMeter()
        let nothingRecorded = meter.flush(now: ms(0))
        #expect(!nothingRecorded)
        #expect(
            publications(&meter, [(10, 100), (20, 120)]) == [true, false],
            "the flush at 0 counts as a publication"
        )
        let heldBack = meter.flush(now: ms(130))
        #expect(heldBack)
        let again = meter.flush(now: ms(131))
        #expect(!again)
        #expect(meter.trailingDeadline == nil)
    }

    @Test func aFlushRestartsTheInterval() {
        var meter = TestMeter()
        #expect(publications(&meter, [(1, 0)]) == [true])
        meter.flush(now: ms(150))
        #expect(publications(&meter, [(2, 200), (3, 250)]) == [false, true], "a state change was published at 150 ms")
    }

    @Test func aCustomInterval() {
        var meter = TestMeter(interval: .seconds(1))
        #expect(meter.interval == .seconds(1))
        #expect(publications(&meter, [(1, 0), (2, 999), (3, 1000)]) == [true, false, true])
    }

    @Test func rateOfASteadyStream() {
        var meter = TestMeter()
        #expect(meter.rate(now: ms(0)) == 0, "nothing recorded")
        for millisecond in 0..<2000 {
            _ = meter.record(bytes: UInt64(millisecond) * 1000, now: ms(millisecond))
        }
        let rate = meter.rate(now: ms(1999))
        #expect((990_000...1_010_000).contains(rate), "1000 bytes a millisecond, got \(rate)")
    }

    @Test func rateDuringTheFirstWindowCountsFromTheFirstSample() {
        var meter = TestMeter()
        _ = meter.record(bytes: 5000, now: ms(0))
        _ = meter.record(bytes: 5500, now: ms(500))
        #expect(meter.rate(now: ms(500)) == 1000, "the bytes on disk before the start do not count")
    }

    @Test func rateDecaysToZeroWhenNothingArrives() {
        var meter = TestMeter()
        for millisecond in 0...1000 {
            _ = meter.record(bytes: UInt64(millisecond) * 1000, now: ms(millisecond))
        }
        let steady = meter.rate(now: ms(1000))
        let halfway = meter.rate(now: ms(1500))
        #expect((990_000...1_010_000).contains(steady))
        #expect((450_000...550_000).contains(halfway), "got \(halfway)")
        #expect(meter.rate(now: ms(2000)) == 0)
        #expect(meter.rate(now: ms(60_000)) == 0)
    }

    @Test func aRestartFromZeroStartsTheRateAfresh() {
        var meter = TestMeter()
        _ = meter.record(bytes: 0, now: ms(0))
        _ = meter.record(bytes: 1_000_000, now: ms(500))
        _ = meter.record(bytes: 0, now: ms(600))
        #expect(meter.rate(now: ms(600)) == 0)
        _ = meter.record(bytes: 100, now: ms(700))
        #expect(meter.rate(now: ms(700)) == 1000)
    }

    @Test func manyRecordsKeepARateOverTheWholeWindow() {
        var meter = TestMeter(rateWindow: .seconds(2))
        #expect(meter.rateWindow == .seconds(2))
        // A burst in the first second, nothing in the second: the window still sees the burst.
        for millisecond in 0..<1000 {
            _ = meter.record(bytes: UInt64(millisecond + 1) * 2, now: ms(millisecond))
        }
        _ = meter.record(bytes: 2000, now: ms(1999))
        let rate = meter.rate(now: ms(2000))
        #expect((900...1100).contains(rate), "2000 bytes over two seconds, got \(rate)")
    }

    @Test func fraction() {
        #expect(TestMeter.fraction(done: 50, expected: 100) == 0.5)
        #expect(TestMeter.fraction(done: 0, expected: 100) == 0)
        #expect(TestMeter.fraction(done: 100, expected: 100) == 1)
        #expect(TestMeter.fraction(done: 200, expected: 100) == 1, "clamped")
        #expect(TestMeter.fraction(done: 5, expected: -1) == 0, "unknown size")
        #expect(TestMeter.fraction(done: 5, expected: 0) == 0)
        #expect(TestMeter.fraction(done: .max, expected: .max) == 1)
    }
}

/// Records each `(total, millisecond)` in turn and returns whether each said to publish.
private func publications(_ meter: inout TestMeter, _ records: [(UInt64, Int)]) -> [Bool] {
    records.map { total, millisecond in meter.record(bytes: total, now: ms(millisecond)) }
}
