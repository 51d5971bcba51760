import DBusKit
import HaulContract
import HaulTestSupport
import HaulCore
import HaulTransfer
import Testing
@testable import HaulService

/// The interleavings that awaiting between a change's effects once allowed, with the task service called directly,
/// in-process: a change and its effects are queued with no `await` in between, and leave in that order. Each runs
/// many times, since only some schedules hit the window.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceOrderingTests {
    /// A Forget right behind the Cancel that completes a task: `TaskDidComplete` goes out before the object goes
    /// away (a Forget run while the Cancel awaited the bus used to drop the signal).
    @Test func aForgetRightAfterACancelNeverDropsTaskDidComplete() async throws {
        try await TaskServiceHarness.with { harness throws in
            for round in 0..<20 {
                let (path, id) = try await harness.suspendedDownload("cancelled-\(round).bin")
                async let cancelled: Void = harness.tasks.run(.cancel, on: id)
                // As soon as the task is completed, as a quick client would.
                async let forgotten: Void = waitUntil("task \(id) to be forgotten", every: .zero) {
                    (try? await harness.tasks.forget(id)) != nil
                }
                _ = try await (cancelled, forgotten)
                let seen = await harness.signals(about: path, until: "InterfacesRemoved").compactMap(\.member)
                #expect(seen.contains(ManagerSignal.taskDidComplete.rawValue), "round \(round): \(seen)")
                #expect(seen.firstIndex(of: ManagerSignal.taskDidComplete.rawValue) ?? .max < seen.firstIndex(of: "InterfacesRemoved") ?? 0)
            }
        }
    }

    /// The same when the task completes by itself: its attempt ends, and a Forget comes between the `State` change
    /// and `TaskDidComplete` of that end.
    @Test func aForgetRightAfterAnAttemptEndsNeverDropsTaskDidComplete() async throws {
        try await TaskServiceHarness.with { harness throws in
            for round in 0..<20 {
                let (path, id) = try await harness.download("finished-\(round).bin")
                let attempt = await harness.attempts.next()
                async let forgotten: Void = Self.forgetOnceCompleted(id, harness)
                attempt.finish(round.isMultiple(of: 2) ? .downloaded(size: 0) : .failed(.http(status: 404)))
                try await forgotten
                let seen = await harness.signals(about: path, until: "InterfacesRemoved")
                let members = seen.compactMap(\.member)
                let completed = members.firstIndex(of: ManagerSignal.taskDidComplete.rawValue)
                #expect(completed != nil, "round \(round): \(members)")
                #expect(completed ?? .max < members.firstIndex(of: "InterfacesRemoved") ?? 0)
                let states = seen.compactMap { $0.changedProperties?[TaskProperty.state.name] }
                #expect(states.last == .state(.completed), "round \(round): \(states)")
            }
        }
    }

    /// `SuspendAll` while a Download is being added: the task ends up suspended exactly when `TaskDidSuspend` was
    /// sent for it (the Download once wrote back a copy of the task taken before it awaited the bus, undoing the
    /// Suspend).
    @Test func aSuspendAllDuringADownloadIsNeverUndone() async throws {
        try await TaskServiceHarness.with { harness throws in
            for round in 0..<20 {
                async let added = harness.download("added-\(round).bin")
                async let suspended: Void = harness.tasks.forEachTask(.suspend)
                let (path, id) = try await added
                await suspended
                await harness.tasks.forEachTask(.suspend)  // whatever happened, it is suspended now
                let seen = await harness.signals(about: path, until: ManagerSignal.taskDidSuspend.rawValue).compactMap(\.member)
                let state = await harness.tasks.queue.entry(id)?.lifecycle.state
                #expect(state == .suspended, "round \(round): \(seen)")
                #expect(seen.filter { $0 == ManagerSignal.taskDidSuspend.rawValue }.count == 1)
                #expect(seen.first == "InterfacesAdded", "\(seen)")
            }
        }
    }

    /// A `*All` keeps each stage at most a batch ahead of the next: after each batch, it waits until the object
    /// server has the batch before, and the bus has read (`written(through:)`) the one before that. So an answer to
    /// another client never waits behind more than a few batches of signals, while the bus reads one batch as the
    /// service makes the next. With three batches and a bit: once, after the third batch, for all of the first batch
    /// and no more than the second, by when the second has been sent.
    @Test func aBulkCommandWaitsForTheBatchBeforeTheLastToBeWritten() async throws {
        try await TaskServiceHarness.with { harness throws in
            let count = 3 * TaskService.batch + 44
            for index in 0..<count { _ = try await harness.suspendedDownload("bulk-\(index).bin") }
            let before = harness.bus.sentCount
            let waitsBefore = harness.bus.writtenWaits.count
            await harness.tasks.forEachTask(.cancel)
            let perTask = (harness.bus.sentCount - before) / count
            #expect(perTask > 0 && (harness.bus.sentCount - before) % count == 0)
            let batch = TaskService.batch * perTask
            let waits = Array(harness.bus.writtenWaits.dropFirst(waitsBefore))
            let description = "\(waits) after \(before), \(perTask) a task"
            #expect(waits.count == 1, "\(description)")
            let wait = try #require(waits.first)
            #expect((before + batch...before + 2 * batch).contains(wait.mark), "\(description)")
            #expect(wait.sent >= before + 2 * batch, "\(description)")
        }
    }

    /// A Download raced by a Cancel and a Forget of the task it creates (as a client that guessed its id would):
    /// however they interleave, the object is announced before anything about it, completes once, and goes away
    /// last, with its record.
    @Test func aDownloadRacedByCancelAndForgetLeavesNothingBehind() async throws {
        try await TaskServiceHarness.with { harness throws in
            for round in 0..<20 {
                let next = await harness.tasks.nextID
                async let added = harness.suspendedDownload("raced-\(round).bin")
                async let cancelled: Void = Self.retrying { try await harness.tasks.run(.cancel, on: next) }
                async let forgotten: Void = Self.forgetOnceCompleted(next, harness)
                let (path, id) = try await added
                _ = try await (cancelled, forgotten)
                #expect(id == next)
                let seen = await harness.signals(about: path, until: "InterfacesRemoved").compactMap(\.member)
                #expect(seen.first == "InterfacesAdded", "round \(round): \(seen)")
                #expect(seen.filter { $0 == ManagerSignal.taskDidComplete.rawValue }.count == 1, "round \(round): \(seen)")
                #expect(await harness.tasks.list().isEmpty)
                #expect(await harness.savedRecords()[id] == nil)
            }
        }
    }

    /// Calls Forget on the task until it succeeds: as soon as the task is completed, as a quick client would.
    static func forgetOnceCompleted(_ id: UInt32, _ harness: TaskServiceHarness) async throws {
        try await retrying { try await harness.tasks.forget(id) }
    }

    /// Runs `call` until it succeeds, yielding in between (the task it names may not exist or be completed yet).
    static func retrying(_ call: () async throws -> Void) async throws {
        while true {
            do { return try await call() } catch { await Task.yield() }
        }
    }
}
