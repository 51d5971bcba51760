import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// The queue through hauld, seen from the test server: `MaxRunningTasks` bounds the connections it serves at once.
@Suite(.timeLimit(.minutes(2))) struct QueueBusTests {
    @Test func theServerNeverSeesMoreTransfersThanMaxRunningTasks() async throws {
        try await TransferFixture.with { f throws in
            try await f.setManager(.maxRunningTasks, .uint32(2))
            let targets = (1...4).map { "/gen/1m?seed=\(40 + $0)&throttle=262144" }
            var tasks: [ObjectPath] = []
            for (index, target) in targets.enumerated() {
                // The server paces each at 256 KiB/s, so that they overlap even on a loaded machine: 4 s each.
                tasks.append(try await f.download(target, to: "q\(index).bin"))
            }
            var most = 0
            var completed = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while completed < tasks.count, ContinuousClock.now < deadline {
                let stats = try await f.server.stats()
                // In flight: asked for and not yet sent whole.
                let pending = targets.map { stats.log($0).count { $0.bytesSent < 1 << 20 } }.reduce(0, +)
                most = max(most, pending)
                completed = 0
                for task in tasks {
                    let state = try await f.property(task, .state)
                    if state == .string("completed") { completed += 1 }
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(completed == tasks.count)
            #expect(most == 2, "at most \(most) transfers at once on the server")
            let stats = try await f.server.stats()
            for (index, target) in targets.enumerated() {
                #expect(stats.requests(target) == 1, "one request each: waiting costs nothing")
                #expect(try await f.errorName(tasks[index]) == "")
                #expect(
                    try await f.sha256(of: "q\(index).bin")
                        == (try await TestHTTPServer.sha256OfGenerated(size: 1 << 20, seed: 41 + index)))
            }
        }
    }
}
