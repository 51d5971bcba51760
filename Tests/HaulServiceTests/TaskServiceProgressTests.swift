import DBusKit
import HaulContract
import HaulTestSupport
import HaulCore
import HaulTransfer
import Testing
@testable import HaulService

/// Progress as the task service publishes it, in virtual time: coalesced to ten `PropertiesChanged` a second
/// however often bytes arrive, and never behind when the task changes state.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceProgressTests {
    /// A hundred updates in a second make ten publications, each with the newest count; a count that arrived
    /// after the last tick goes out with the state change that follows it.
    @Test func progressIsCoalescedToTenUpdatesASecondAndTheLastValueIsPublished() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, id) = try await harness.download("coalesced.bin")
            let attempt = await harness.attempts.next()
            await attempt.head(headers: [("ETag", "\"v1\"")], expectedTotal: 1_000_000)
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidResume.rawValue)
            let clock = harness.clock
            await clock.waitForSleepers(count: 1)  // the ticker
            for step in 1...100 {
                attempt.reports.progress.set(bytes: UInt64(step) * 1000)
                clock.advance(by: .milliseconds(10))
                // Once the ticker has published, it sleeps again.
                await clock.waitForSleepers(count: 1)
            }
            attempt.reports.progress.set(bytes: 100_500)
            try await harness.tasks.run(.suspend, on: id)

            let changes = await harness.signals(about: path, until: ManagerSignal.taskDidSuspend.rawValue).compactMap(\.changedProperties)
            let ticks = changes.filter { $0[TaskProperty.state.name] == nil }
            #expect(ticks.compactMap { $0[TaskProperty.bytesReceived.name] } == (1...10).map { .uint64(UInt64($0) * 10_000) })
            #expect(ticks.count == 10, "\(ticks.count) progress updates in one second")
            #expect(ticks.first?[TaskProperty.bytesExpectedToReceive.name] == .int64(1_000_000), "the head goes with the next tick")
            // Published when it changes: steady at 10 000 bytes every 10 ms.
            let rate = ticks.compactMap { $0[TaskProperty.rate.name]?.uint64Value }.last ?? 0
            #expect((99_000...100_000).contains(rate), "\(rate) bytes a second")
            let suspended = changes.first { $0[TaskProperty.state.name] == .state(.suspended) }
            #expect(suspended?[TaskProperty.bytesReceived.name] == .uint64(100_500))
            #expect(suspended?[TaskProperty.rate.name] == .uint64(0))
        }
    }

    /// A task held to a rate limit publishes once a second, each time with the newest count: its ticker wakes hauld
    /// no more often than that.
    @Test func aRateLimitedTaskPublishesOnceASecond() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.rateLimit = 1_000_000
            let (path, id) = try await harness.download("limited.bin", options: options)
            let attempt = await harness.attempts.next()
            await attempt.head(headers: [("ETag", "\"v1\"")], expectedTotal: 1_000_000)
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidResume.rawValue)
            let clock = harness.clock
            await clock.waitForSleepers(count: 1)  // the ticker
            for step in 1...200 {
                attempt.reports.progress.set(bytes: UInt64(step) * 1000)
                clock.advance(by: .milliseconds(10))
                await clock.waitForSleepers(count: 1)
            }
            try await harness.tasks.run(.suspend, on: id)

            let changes = await harness.signals(about: path, until: ManagerSignal.taskDidSuspend.rawValue)
                .compactMap(\.changedProperties)
            let ticks = changes.filter { $0[TaskProperty.state.name] == nil }
            #expect(ticks.compactMap { $0[TaskProperty.bytesReceived.name] } == [.uint64(100_000), .uint64(200_000)])
        }
    }

    /// The completion publishes the size of the file in place, whatever the last tick said.
    @Test func theCompletionPublishesTheFinalCount() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, _) = try await harness.download("short.bin")
            let attempt = await harness.attempts.next()
            attempt.reports.progress.set(bytes: 12)
            attempt.finish(.downloaded(size: 42))
            let changes = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).compactMap(\.changedProperties)
            #expect(changes.last?[TaskProperty.state.name] == .state(.completed))
            #expect(changes.last?[TaskProperty.bytesReceived.name] == .uint64(42))
            #expect(changes.last?[TaskProperty.bytesExpectedToReceive.name] == .int64(42), "a size the server never gave is the file's")
            #expect(changes.last?[TaskProperty.downloadProgress.name] == .double(1))
        }
    }
}
