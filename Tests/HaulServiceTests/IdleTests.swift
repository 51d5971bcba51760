import HaulContract
import HaulService
import HaulTestSupport
import Testing

/// An idle hauld arms no timer of its own and leaves libdispatch's pool unused (`EventLoopClock`, `HauldMain`):
/// once its transfers and indicator delays are over and its heap trimmed after the last call, none of its threads
/// wakes.
@Suite(.timeLimit(.minutes(2))) struct IdleTests {
    @Test func noThreadWakesOnceATransferIsOver() async throws {
        try await TransferFixture.with { f throws in
            // About 7.5 s on the wire: long enough for the trim's timer, armed at the first call, to fire in the
            // quiet after it (as it did on a loaded machine), which the window below must leave out.
            let task = try await f.download("/gen/2m?seed=41&throttle=280000", to: "idle.bin")
            try await f.wait(task, until: .completed)
            // The heap is trimmed once calls have stopped for `HeapTrim.quietPeriod`, and its timer, armed at the
            // first call, also wakes hauld at that call's deadline if the transfer took about as long: the window
            // begins after both. libdispatch ends a serial queue's idle worker thread after 5 s (the bus
            // connection's, the record writer's); a thread that ends is not counted, but those are gone by then too.
            try await Task.sleep(for: HeapTrim.quietPeriod + .seconds(2))
            let before = try ProcessSample(pid: f.daemon.hauld.pid)
            try await Task.sleep(for: .seconds(3))
            let after = try ProcessSample(pid: f.daemon.hauld.pid)
            // A thread preempted must have run: both counts stay still.
            let switches = [
                before.voluntarySwitches, before.involuntarySwitches, after.voluntarySwitches, after.involuntarySwitches,
            ]
            #expect(
                after.wakeups(since: before) + after.preemptions(since: before) == 0,
                "voluntary and involuntary switches, before and after: \(switches)"
            )
        }
    }
}
