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

    /// A segmented download's plan, which its connections post every MiB, is saved at once the first time, then at
    /// most every five seconds (a save syncs the partial file's data and writes the record); the attempt's end saves
    /// the last one.
    @Test func aSegmentedDownloadsPlanIsSavedEveryFiveSecondsAtMost() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, id) = try await harness.download("segmented.bin")
            let attempt = await harness.attempts.next()
            await attempt.head(headers: [("ETag", "\"v1\"")], expectedTotal: 64 << 20)
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidResume.rawValue)
            let clock = harness.clock
            await clock.waitForSleepers(count: 1)  // the ticker
            var plan = SegmentPlan(total: 64 << 20)
            func tick(writing bytes: Int64) async {
                plan.record(bytes, in: 0)
                attempt.reports.plans.post(plan)
                clock.advance(by: TaskService.progressInterval)
                await clock.waitForSleepers(count: 1)
            }
            let saved = { await harness.savedRecords()[id]?.segments?.bytesDone }

            await tick(writing: 1 << 20)
            #expect(await saved() == 1 << 20, "the first plan is saved at once")
            for step in 1..<50 {
                await tick(writing: 100_000)
                #expect(await saved() == 1 << 20, "saved again \(step * 100) ms after the first")
            }
            await tick(writing: 100_000)
            #expect(await saved() == (1 << 20) + 50 * 100_000, "saved again five seconds after the first")

            plan.record(300_000, in: 0)
            attempt.reports.plans.post(plan)
            try await harness.tasks.run(.suspend, on: id)
            #expect(await saved() == (1 << 20) + 53 * 100_000, "the suspend saves the last plan")
        }
    }

    /// Held to a rate limit, a segmented download's plan is saved at once the first time, then at most every 30
    /// seconds: each save wakes hauld many times, and such a transfer runs for hours on a battery.
    @Test func aRateLimitedDownloadsPlanIsSavedEveryThirtySecondsAtMost() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.rateLimit = 4 << 20
            let (path, id) = try await harness.download("limited-segmented.bin", options: options)
            let attempt = await harness.attempts.next()
            await attempt.head(headers: [("ETag", "\"v1\"")], expectedTotal: 1 << 30)
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidResume.rawValue)
            let clock = harness.clock
            await clock.waitForSleepers(count: 1)  // the ticker, once a second under a limit
            var plan = SegmentPlan(total: 1 << 30)
            func tick() async {
                plan.record(4 << 20, in: 0)
                attempt.reports.plans.post(plan)
                clock.advance(by: TaskService.limitedProgressInterval)
                await clock.waitForSleepers(count: 1)
            }
            let saved = { await harness.savedRecords()[id]?.segments?.bytesDone }

            await tick()
            #expect(await saved() == 4 << 20, "the first plan is saved at once")
            for second in 1..<30 {
                await tick()
                #expect(await saved() == 4 << 20, "saved again \(second) s after the first")
            }
            await tick()
            #expect(await saved() == 31 * (4 << 20), "saved again 30 s after the first")
        }
    }
}
