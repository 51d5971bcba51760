import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// What a hostile client leaves in hauld's memory: after a barrage of about 6,500 hostile calls (huge strings, deep
/// variants, wrong types, hostile URLs, paths and options, a burst of parallel calls; `HostileBarrage`) and the
/// forgetting of every task it created, hauld's heap comes back to within 5 MB of a fresh hauld's once it has been
/// quiet for the time it waits before trimming (`HeapTrim`). Before hauld fixed glibc's thresholds and trimmed after
/// calls, a lean hauld went from 17 to 97 MB and stayed there.
@Suite(.serialized, .timeLimit(.minutes(10))) struct MemoryAfterAbuseTests {
    @Test func memoryComesBackAfterAHostileBarrage() async throws {
        try await DaemonFixture.with(arguments: ["--log-level", "critical"]) { daemon throws in
            let folder = daemon.bus.directory.appendingPathComponent("abuse")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let upload = folder.appendingPathComponent("upload.bin")
            try Data(repeating: 7, count: 4096).write(to: upload)
            let barrage = HostileBarrage(folder: folder.path, uploadFile: upload.path)
            #expect(barrage.callCount > 6000)

            // Anonymous memory, the heap and stacks: the code pages the barrage's paths bring in are not what comes
            // back.
            let pid = daemon.hauld.pid
            let fresh = try ProcessSample(pid: pid).anonymousBytes
            let hostile = try await DBusConnection.connect(address: daemon.bus.address)
            try await barrage.send(on: hostile)
            await hostile.close()
            #expect(daemon.hauld.running.isRunning)

            var latest = 0
            try await waitUntil(
                "hauld's heap back within 5 MB of \(fresh) bytes", timeout: .seconds(90), every: .seconds(1),
                seen: { "\(latest) bytes" }
            ) {
                latest = try ProcessSample(pid: pid).anonymousBytes
                return latest <= fresh + 5_000_000
            }
        }
    }
}
