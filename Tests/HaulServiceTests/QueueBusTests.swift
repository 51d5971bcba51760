import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// The queue through hauld, seen from the test server: `MaxRunningTasks` bounds the connections it serves at once.
@Suite(.timeLimit(.minutes(2))) struct QueueBusTests {
    @Test func theServerNeverSeesMoreTransfersThanMaxRunningTasks() async throws {
        try await TransferFixture.with { f throws in
            try await f.calls.set(.maxRunningTasks, to: .uint32(2))
            let targets = (1...4).map { "/gen/1m?seed=\(40 + $0)&throttle=262144" }
            var tasks: [ObjectPath] = []
            for (index, target) in targets.enumerated() {
                // The server paces each at 256 KiB/s, so that they overlap even on a loaded machine: 4 s each.
                tasks.append(try await f.download(target, to: "q\(index).bin"))
            }
            for task in tasks { try await f.wait(task, until: .completed) }
            // Counted by the server from each request to the end of its answer: no sample can miss a moment.
            let most = try await f.server.stats().mostInFlight
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
