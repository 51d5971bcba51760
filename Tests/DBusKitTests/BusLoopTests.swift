@testable import DBusKit
import Glibc
import Synchronization
import Testing

/// A connection's thread: what is queued runs in order on it, a watch runs while enabled and its descriptor is ready, a
/// timer repeats while armed, and a stopped loop ends its thread.
@Suite(.timeLimit(.minutes(1))) struct BusLoopTests {
    /// What the loop's handlers saw, in order.
    final class Log: Sendable {
        let entries = Mutex<[String]>([])

        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
        func count(_ entry: String) -> Int { all.count { $0 == entry } }
    }

    /// Waits up to 5 s for `condition`, looking every 10 ms.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// An actor on the loop, as a connection is.
    actor OnLoop {
        let loop: BusLoop
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

        init(loop: BusLoop) { self.loop = loop }

        func record(_ entry: String, in log: Log) {
            loop.checkIsolated()
            log.add(entry)
        }
    }

    @Test func jobsAndBlocksRunInTheOrderTheyWereQueuedOnTheLoopsThread() async throws {
        let loop = try #require(BusLoop(name: "test.loop"))
        defer { loop.stop() }
        let actor = OnLoop(loop: loop)
        let log = Log()
        for index in 0..<100 {
            loop.async {
                loop.checkIsolated()
                log.add("block \(index)")
            }
        }
        await actor.record("job", in: log)
        #expect(log.all == (0..<100).map { "block \($0)" } + ["job"])
    }

    @Test func aWatchRunsWhileEnabledAndReadyAndItsDescriptorIsClosedWithIt() async throws {
        let loop = try #require(BusLoop(name: "test.loop"))
        defer { loop.stop() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[1]) }
        let readEnd = ends[0]
        let log = Log()
        let watch = loop.addWatch(fd: readEnd, for: .readable) {
            var byte: UInt8 = 0
            if read(readEnd, &byte, 1) == 1 { log.add("read") }
        }
        var byte: UInt8 = 1
        #expect(write(ends[1], &byte, 1) == 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.count("read") == 0, "not yet enabled")

        #expect(loop.setWatch(watch, enabled: true))
        #expect(try await Self.eventually { log.count("read") == 1 })

        #expect(loop.setWatch(watch, enabled: false))
        #expect(write(ends[1], &byte, 1) == 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.count("read") == 1, "disabled")

        // Removed on the loop's thread, as libdbus removes its watches; the descriptor is closed before it returns.
        let closed = await withCheckedContinuation { continuation in
            loop.async {
                loop.removeWatch(watch)
                continuation.resume(returning: fcntl(readEnd, F_GETFD) == -1 && errno == EBADF)
            }
        }
        #expect(closed)
        #expect(!loop.setWatch(watch, enabled: true), "gone")
    }

    @Test func aTimerRepeatsWhileArmedAndStopsOnceDisarmed() async throws {
        let loop = try #require(BusLoop(name: "test.loop"))
        defer { loop.stop() }
        let log = Log()
        let timer = loop.addTimer { log.add("fired") }
        loop.async { loop.setTimer(timer, every: .milliseconds(20)) }
        #expect(try await Self.eventually { log.count("fired") >= 3 })

        loop.async { loop.setTimer(timer, every: nil) }
        try await Task.sleep(for: .milliseconds(50))
        let fired = log.count("fired")
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.count("fired") == fired, "disarmed")

        loop.async { loop.removeTimer(timer) }
    }

    @Test func aStoppedLoopRunsWhatWasQueuedAndEndsItsThread() async throws {
        weak var released: BusLoop?
        let log = Log()
        do {
            let loop = try #require(BusLoop(name: "test.loop"))
            released = loop
            loop.async { log.add("before the stop") }
            loop.stop()
        }
        // The thread holds the loop until it ends.
        #expect(try await Self.eventually { released == nil })
        #expect(log.all == ["before the stop"])
    }
}
