import Foundation
import HaulTestSupport
import HaulTransfer
import NIOCore
import NIOPosix
import Testing

/// A download's last sync waits for the disk, seconds on a busy one. It must not wait on an event loop: the loops
/// carry every other transfer (every limited connection shares one) and, in hauld, all of Swift concurrency. The
/// disk here takes `syncSeconds` for each sync, and every loop must answer meanwhile.
@Suite(.timeLimit(.minutes(2))) struct SyncOffTheLoopsTests {
    static let syncSeconds = 4.0

    /// On one connection (the response's file) and on four (the segments' file).
    @Test(arguments: [1, 4]) func everyLoopAnswersWhileADownloadSyncs(_ connections: Int) async throws {
        let disk = try await SlowSyncDisk(syncSeconds: Self.syncSeconds)
        defer { disk.stop() }
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let partial = disk.folder.appendingPathComponent("file.partial")
        // The download's own code on a loop too, as in hauld.
        let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        let download = Task(executorPreference: executor) {
            try await SegmentedDownloadTests.download(server, "/gen/4m?seed=85", to: partial, connections: connections)
        }
        #expect(try await disk.syncBegun(timeout: 60) == "/file.partial")
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
            let asked = ContinuousClock.now
            try await loop.submit {}.get()
            // A loop that waits for the disk answers once the sync is over; a busy one, within milliseconds.
            #expect(asked.duration(to: .now) < .seconds(Self.syncSeconds / 2), "\(loop) waited for the disk")
        }
        #expect(try await download.value.bytesOnDisk == 4 << 20)
    }
}

/// Runs a task's jobs on one event loop, as hauld, which makes the loops Swift concurrency's global executor, runs
/// all of its tasks.
private final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
