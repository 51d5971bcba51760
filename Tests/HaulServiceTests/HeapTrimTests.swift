import HaulService
import HaulTestSupport
import Testing

/// In virtual time: when the trim happens, to the nanosecond, and how often.
@Suite(.timeLimit(.minutes(3))) struct HeapTrimTests {
    let clock = ManualClock()
    let delay = Duration.seconds(60)
    /// When each trim happened.
    let trims: AsyncStream<ContinuousClock.Instant>
    let trimmed: AsyncStream<ContinuousClock.Instant>.Continuation

    init() {
        (trims, trimmed) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
    }

    let quiet = Duration.seconds(15)

    func makeTrim() -> HeapTrim {
        HeapTrim(afterPool: delay, afterCalls: quiet, clock: clock) { [clock, trimmed] in trimmed.yield(clock.now) }
    }

    /// The pool closes the connection of the latest release last: the trim waits for it, and happens once.
    @Test func aLaterReleaseMovesTheTrim() async {
        let trim = makeTrim()
        let first = clock.now
        await trim.connectionReleased()
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(30))
        await trim.connectionReleased()
        clock.advance(by: .seconds(30))
        // Woken at the first release's deadline, it sleeps on until the second's.
        await clock.waitForSleepers(count: 1)
        #expect(clock.deadlines == [first.advanced(by: .seconds(90))])
        clock.advance(by: .seconds(30))
        var iterator = trims.makeAsyncIterator()
        #expect(await iterator.next() == first.advanced(by: .seconds(90)))
        #expect(clock.deadlines.isEmpty, "once")
    }

    @Test func aReleaseAfterATrimArmsAnotherOne() async {
        let trim = makeTrim()
        var iterator = trims.makeAsyncIterator()
        for _ in 0..<2 {
            let released = clock.now
            await trim.connectionReleased()
            await clock.waitForSleepers(count: 1)
            clock.advance(by: delay)
            #expect(await iterator.next() == released.advanced(by: delay))
        }
    }

    @Test func cancelledBeforeItsDeadlineItNeverTrims() async {
        let trim = makeTrim()
        await trim.connectionReleased()
        await clock.waitForSleepers(count: 1)
        await trim.cancel()
        await clock.waitForSleepers(count: 0)
        clock.advance(by: delay * 2)
        trimmed.finish()
        var iterator = trims.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    /// A burst of calls: one trim, once they have stopped for the quiet period.
    @Test func callsTrimOnceTheyStop() async {
        let trim = makeTrim()
        var iterator = trims.makeAsyncIterator()
        for _ in 0..<3 {
            await trim.callReceived()
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(5))
        }
        let last = clock.now.advanced(by: .seconds(-5))
        await clock.waitForSleepers(count: 1)
        #expect(clock.deadlines == [last.advanced(by: quiet)])
        clock.advance(by: .seconds(10))
        #expect(await iterator.next() == last.advanced(by: quiet))
        #expect(clock.deadlines.isEmpty, "once")
    }

    /// Calls during the pool's wait do not bring its trim forward: the later deadline wins, and one trim serves both.
    @Test func callsDoNotBringThePoolsTrimForward() async {
        let trim = makeTrim()
        let released = clock.now
        await trim.connectionReleased()
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(10))
        await trim.callReceived()
        clock.advance(by: quiet)
        await clock.waitForSleepers(count: 1)
        #expect(clock.deadlines == [released.advanced(by: delay)])
        clock.advance(by: delay - .seconds(10) - quiet)
        var iterator = trims.makeAsyncIterator()
        #expect(await iterator.next() == released.advanced(by: delay))
        #expect(clock.deadlines.isEmpty, "once")
    }
}
