import DBusKit
import HaulContract
import HaulCore
import HaulTransfer
import HaulTestSupport
import Testing
@testable import HaulService

/// Retry back-off as the task service carries it out, in virtual time: when each attempt starts after a failure,
/// what `Retry-After` changes, and what spends a retry. The delays themselves are `RetryPolicy`'s (`RetryPolicyTests`);
/// here they are checked as timers armed and fired by the service.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceRetryTests {
    /// Fails `attempt` with `failure`, then checks that the next one starts `delay` after the failure, not a
    /// nanosecond earlier; returns it.
    static func retried(
        _ attempt: ScriptedAttempt, failing failure: TransferFailure, after delay: Duration,
        _ harness: TaskServiceHarness
    ) async throws -> ScriptedAttempt {
        let clock = harness.clock
        let failedAt = clock.now
        attempt.finish(.failed(failure))
        // The retry timer, beside the progress ticker (which sleeps 100 ms at a time).
        await clock.waitForSleepers(count: 2)
        let due = failedAt.advanced(by: delay)
        let armed = clock.deadlines.last ?? failedAt
        #expect(armed == due, "the retry is due \(failedAt.duration(to: armed)) after the failure")
        clock.advance(to: due.advanced(by: .nanoseconds(-1)))
        clock.advance(to: due)
        let next = await harness.attempts.next()
        #expect(next.startedAt == due)
        return next
    }

    @Test func theBackOffDoublesFromOneSecondUntilTheRetriesAreSpent() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.maxRetries = 3
            let (path, _) = try await harness.download("retried.bin", options: options)
            var attempt = await harness.attempts.next()
            for seconds in [1, 2, 4] {
                attempt = try await Self.retried(
                    attempt, failing: .network("connection reset"), after: .seconds(seconds), harness
                )
            }
            attempt.finish(.failed(.network("reset for good")))
            let completed = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).last
            let failure: [DBusValue] = [.string(HaulErrorName.network.fullName), .string("reset for good")]
            #expect(completed?.body == [.objectPath(path)] + failure)
            #expect(harness.attempts.count == 4, "three retries after the first attempt")
        }
    }

    /// A server's `Retry-After` is a floor under the back-off, capped at an hour; a shorter one changes nothing.
    @Test func retryAfterIsHonouredCappedAndNeverShortensTheBackOff() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, _) = try await harness.download("later.bin")
            var attempt = await harness.attempts.next()
            attempt = try await Self.retried(
                attempt, failing: .http(status: 503, retryAfter: .seconds(30)), after: .seconds(30), harness
            )
            attempt = try await Self.retried(
                attempt, failing: .http(status: 429, retryAfter: .seconds(86_400)), after: .seconds(3600), harness
            )
            attempt = try await Self.retried(
                attempt, failing: .http(status: 503, retryAfter: .zero), after: .seconds(4), harness
            )
            attempt.finish(.downloaded(size: 0))
            let completed = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).last
            #expect(completed?.body.dropFirst() == [.string(""), .string("")])
        }
    }

    /// A permanent failure is never retried, whatever the budget.
    @Test func aPermanentFailureCompletesAtOnce() async throws {
        try await TaskServiceHarness.with { harness throws in
            let (path, _) = try await harness.download("missing.bin")
            await harness.attempts.next().finish(.failed(.http(status: 404)))
            let completed = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).last
            #expect(completed?.body.dropFirst().first == .string(HaulErrorName.http.fullName))
            #expect(harness.attempts.count == 1)
        }
    }

    /// Retries are spent by failed attempts only: not by time spent suspended or waiting, not by an attempt a
    /// Suspend stopped. A Resume starts a run with the whole budget.
    @Test func onlyFailedAttemptsSpendRetries() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.maxRetries = 1
            let (path, id) = try await harness.download("budget.bin", options: options)
            let first = await harness.attempts.next()
            first.finish(.failed(.network("reset")))
            await harness.clock.waitForSleepers(count: 2)
            // Suspended while waiting to retry: the timer goes, and an hour suspended starts nothing.
            try await harness.tasks.run(.suspend, on: id)
            harness.clock.advance(by: .seconds(3600))
            try await harness.tasks.run(.resume, on: id)
            let second = await harness.attempts.next()
            #expect(second.startedAt == harness.clock.now, "a Resume starts at once")
            #expect(harness.attempts.count == 2, "the cancelled timer started nothing")
            // Stopped by a Suspend: no failure, no retry spent.
            try await harness.tasks.run(.suspend, on: id)
            #expect(second.wasStopped)
            try await harness.tasks.run(.resume, on: id)
            let third = await harness.attempts.next()
            let fourth = try await Self.retried(third, failing: .network("reset"), after: .seconds(1), harness)
            fourth.finish(.failed(.network("reset again")))
            let completed = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue).last
            #expect(completed?.body.dropFirst().last == .string("reset again"))
            #expect(harness.attempts.count == 4)
        }
    }

    /// `Task.Retry`, called as a client calls it: a task that failed runs again, with a fresh retry budget and
    /// `TaskDidResume`; one that succeeded answers `TaskCompleted`.
    @Test func retryRunsAFailedTaskAgain() async throws {
        try await TaskServiceHarness.with { harness throws in
            var options = DownloadOptions()
            options.maxRetries = 0
            let (path, _) = try await harness.download("again.bin", options: options)
            await harness.attempts.next().finish(.failed(.http(status: 503)))
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
            let retry = { () async throws -> [DBusValue] in
                try await harness.bus.call(
                    path: path, interface: HaulBus.taskInterface, member: TaskMethod.retry.rawValue
                )
            }
            _ = try await retry()
            let again = await harness.attempts.next()
            #expect(again.record.path == harness.file("again.bin"))
            again.finish(.downloaded(size: 0))
            let signals = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
                .compactMap(\.member).filter { $0.hasPrefix("TaskDid") }
            #expect(signals == [ManagerSignal.taskDidResume.rawValue, ManagerSignal.taskDidComplete.rawValue])
            do {
                _ = try await retry()
                Issue.record("a task that succeeded was retried")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.taskCompleted.fullName)
            }
        }
    }
}
