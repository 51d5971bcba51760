import HaulContract
import HaulTestSupport
import Testing

/// An idle hauld arms no timer of its own and leaves libdispatch's pool unused (`EventLoopClock`, `HauldMain`):
/// once its transfers and indicator delays are over, none of its threads wakes.
@Suite(.timeLimit(.minutes(2))) struct IdleTests {
    @Test func noThreadWakesOnceATransferIsOver() async throws {
        try await TransferFixture.with { f throws in
            let task = try await f.download("/gen/2m?seed=41", to: "idle.bin")
            try await f.wait(task, until: .completed)
            // libdispatch ends a serial queue's idle worker thread after 5 s (the bus connection's, the record
            // writer's); a thread that ends is not counted, but give them time to go anyway.
            try await Task.sleep(for: .seconds(6))
            let before = try ProcessSample(pid: f.daemon.hauld.pid)
            try await Task.sleep(for: .seconds(3))
            let after = try ProcessSample(pid: f.daemon.hauld.pid)
            #expect(after.wakeups(since: before) == 0, "\(after.contextSwitches) since \(before.contextSwitches)")
        }
    }
}
