import ServiceKit
import Synchronization
import Testing

/// The outbox every service drains: order, barriers, and what happens when it ends.
@Suite(.timeLimit(.minutes(1))) struct OutboxTests {
    /// What a carrier saw, in order.
    final class Log: Sendable {
        private let entries = Mutex<[Int]>([])
        var values: [Int] { entries.withLock { $0 } }
        func append(_ value: Int) { entries.withLock { $0.append(value) } }
    }

    /// What a carrier of batches saw, batch by batch.
    final class BatchLog: Sendable {
        private let entries = Mutex<[[Int]]>([])
        var batches: [[Int]] { entries.withLock { $0 } }
        func append(_ batch: [Int]) { entries.withLock { $0.append(batch) } }
    }

    @Test func effectsAreCarriedOutInTheOrderTheyWereSentAndABarrierWaitsForThem() async {
        let outbox = Outbox<Int>()
        let log = Log()
        for value in 0..<100 { outbox.send(value) }
        let running = Task {
            await outbox.run { value, _ in
                await Task.yield()
                log.append(value)
            }
        }
        await outbox.settled()
        #expect(log.values == Array(0..<100))
        outbox.send(100)
        await outbox.settled()
        #expect(log.values == Array(0...100))
        outbox.finish()
        await running.value
    }

    /// `runInBatches` hands over what is queued together, and a barrier still waits for every effect before it.
    @Test func inBatchesEffectsComeTogetherInOrderAndABarrierWaitsForThem() async {
        let outbox = Outbox<Int>()
        let log = BatchLog()
        for value in 0..<100 { outbox.send(value) }
        let running = Task {
            await outbox.runInBatches { values, _ in
                await Task.yield()
                log.append(values)
            }
        }
        await outbox.settled()
        #expect(log.batches == [Array(0..<100)])
        for value in 100..<150 { outbox.send(value) }
        await outbox.settled()
        #expect(log.batches.joined().elementsEqual(0..<150))
        outbox.finish()
        await running.value
    }

    /// A mark is reached once what was sent before it is carried out, while what was sent after it still waits; one
    /// made after the outbox ended is reached at once.
    @Test func aMarkIsReachedOnceWhatCameBeforeItIsCarriedOut() async throws {
        let outbox = Outbox<Int>()
        let log = BatchLog()
        let gate = AsyncStream<Void>.makeStream()
        for value in 0..<100 { outbox.send(value) }
        let first = outbox.mark()
        outbox.send(100)
        let second = outbox.mark()
        let running = Task {
            await outbox.runInBatches { values, _ in
                log.append(values)
                // The effect after the first mark is held up until the test lets it through.
                if values.contains(100) { for await _ in gate.stream { break } }
            }
        }
        await first.reached()
        #expect(log.batches.first == Array(0..<100))
        let secondReached = Mutex(false)
        let waiting = Task {
            await second.reached()
            secondReached.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!secondReached.withLock { $0 }, "the effect before the second mark is still being carried out")
        gate.continuation.yield()
        await waiting.value
        #expect(log.batches == [Array(0..<100), [100]])
        outbox.finish()
        await running.value
        await outbox.mark().reached()  // would hang forever if an ended outbox queued it
    }

    @Test func finishCarriesOutWhatIsQueuedThenEndsAndLaterBarriersReturnAtOnce() async {
        let outbox = Outbox<Int>()
        let log = Log()
        outbox.send(1)
        outbox.send(2)
        outbox.finish()
        outbox.send(3)  // after finish: dropped
        await outbox.run { value, _ in log.append(value) }
        #expect(log.values == [1, 2])
        await outbox.settled()  // would hang forever if an ended outbox queued it
        outbox.send(4)
        #expect(log.values == [1, 2])
    }

    @Test func aBarrierQueuedBeforeCancellationIsAnsweredAndTheRestDropped() async {
        let outbox = Outbox<Int>()
        let log = Log()
        let begun = AsyncStream<Void>.makeStream()
        let running = Task {
            await outbox.run { value, _ in
                log.append(value)
                begun.continuation.yield()
                // Holds the outbox until the test cancels it.
                if value == 1 { try? await Task.sleep(for: .seconds(3600)) }
            }
        }
        outbox.send(1)
        outbox.send(2)
        let waiting = Task { await outbox.settled() }
        var iterator = begun.stream.makeAsyncIterator()
        await iterator.next()
        running.cancel()
        await running.value
        await waiting.value
        #expect(log.values == [1])
        await outbox.settled()
    }

    @Test func callsThatWaitForAnAnswerRunBesideTheOutboxAndEndWithIt() async {
        let outbox = Outbox<Int>()
        let log = Log()
        let started = AsyncStream<Void>.makeStream()
        let running = Task {
            await outbox.run { value, calls in
                if value == 0 {
                    calls.addTask {
                        started.continuation.yield()
                        // An answer that never comes: cancelled when the outbox ends.
                        try? await Task.sleep(for: .seconds(3600))
                        log.append(Task.isCancelled ? -1 : 0)
                    }
                } else {
                    log.append(value)
                }
            }
        }
        outbox.send(0)
        outbox.send(1)
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        await outbox.settled()
        #expect(log.values == [1])
        outbox.finish()
        await running.value
        #expect(log.values == [1, -1])
    }
}
