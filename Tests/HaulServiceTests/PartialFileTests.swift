import Dispatch
import Foundation
import HaulContract
import HaulCore
import HaulTestSupport
import Testing
@testable import HaulService

/// A cancelled download's partial file is removed on the partial files' own queue, never on the task service's
/// loop, and before what must not see it: the `Cancel`'s answer, and the first attempt of a new task to the same file.
@Suite(.timeLimit(.minutes(1))) struct PartialFileTests {
    @Test func aCancelRemovesThePartialFileOffTheServiceBeforeItAnswersAndBeforeTheNextAttempt() async throws {
        let disk = DispatchQueue(label: "test.partial-files")
        try await TaskServiceHarness.with(partialFiles: PartialFiles(queue: disk)) { harness throws in
            let (path, id) = try await harness.suspendedDownload("same.bin")
            let partial = harness.file("same.bin") + SafeFileName.partialSuffix
            try Data(repeating: 1, count: 4096).write(to: URL(fileURLWithPath: partial))

            disk.suspend()
            // Resumed once, whatever fails: hauld's shutdown at the end waits for the queue.
            var held = true
            defer { if held { disk.resume() } }
            let cancelling = Task { try await harness.tasks.run(.cancel, on: id) }
            _ = await harness.signals(about: path, until: ManagerSignal.taskDidComplete.rawValue)
            // Completed, and the service answers meanwhile; the file waits for the held queue.
            #expect(await harness.tasks.list().contains(path))
            #expect(FileManager.default.fileExists(atPath: partial))
            _ = try await harness.download("same.bin")
            try await Task.sleep(for: .milliseconds(200))  // for an attempt started too early to reach the runner
            #expect(harness.attempts.count == 0, "the new task's attempt began before the old file was removed")

            disk.resume()
            held = false
            try await cancelling.value
            #expect(!FileManager.default.fileExists(atPath: partial))
            _ = await harness.attempts.next()
            // What the new attempt writes stays: nothing asked before it removes it later.
            try Data(repeating: 2, count: 10).write(to: URL(fileURLWithPath: partial))
            await harness.tasks.partialFiles.done()
            #expect(FileManager.default.fileExists(atPath: partial))
        }
    }

    /// Removals asked while the thread drains the ones before are taken by the same drain, and `done()` waits for
    /// them all.
    @Test func doneWaitsForEveryChangeAskedBeforeIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = (0..<1_000).map { folder.appendingPathComponent("\($0).haul-partial").path }
        for path in paths { try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path)) }
        let files = PartialFiles()
        for (index, path) in paths.enumerated() {
            if index % 2 == 0 { files.remove(path) } else { files.empty(path) }
        }
        await files.done()
        for (index, path) in paths.enumerated() {
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
            #expect(size == (index % 2 == 0 ? nil : 0), "\(path)")
        }
    }
}
