import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import Testing
@testable import HaulService

/// One file, one unfinished task: a second download to a path an unfinished task writes is refused with
/// `FileExists`, before and after a restart, and the path is free again once that task has completed.
@Suite(.timeLimit(.minutes(3))) struct TaskServiceDestinationTests {
    static func refusesADownloadTo(_ name: String, _ harness: TaskServiceHarness) async {
        await #expect {
            _ = try await harness.suspendedDownload(name)
        } throws: { error in
            (error as? DBusError)?.name == HaulErrorName.fileExists.fullName
        }
    }

    @Test func anUnfinishedTasksFileIsNotGivenTwice() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var first: UInt32 = 0
        try await TaskServiceHarness.with(root: root) { harness in
            first = try await harness.suspendedDownload("one.iso").1
            _ = try await harness.suspendedDownload("two.iso")
            await Self.refusesADownloadTo("one.iso", harness)
        }
        try await TaskServiceHarness.with(root: root) { harness in
            await Self.refusesADownloadTo("one.iso", harness)
            try await harness.tasks.run(.cancel, on: first)
            try await waitUntil("the first task completes") {
                await harness.tasks.properties(of: first)?[TaskProperty.state.name] == .state(.completed)
            }
            let again = try await harness.suspendedDownload("one.iso").1
            try await harness.tasks.forget(first)
            await Self.refusesADownloadTo("one.iso", harness)
            await Self.refusesADownloadTo("two.iso", harness)
            #expect(again != first)
        }
    }
}
