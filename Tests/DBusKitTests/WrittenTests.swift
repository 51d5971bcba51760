import DBusKit
import HaulTestSupport
import Synchronization
import Testing

/// `written()` waits until the bus has read what was queued, not only until libdbus has it: a bus that reads nothing
/// holds it up, one that reads again lets it return, and so does closing the connection.
@Suite(.timeLimit(.minutes(1))) struct WrittenTests {
    final class Flag: Sendable {
        let isSet = Mutex(false)
    }

    /// Pauses `bus` and queues 4 MiB of signals on `connection`, far more than the socket holds, so that most of it
    /// waits in libdbus's queue; returns a `written()` waiting for it, and what it sets once it returns.
    static func fillQueue(
        of connection: DBusConnection, on bus: PrivateBus
    ) throws -> (waiting: Task<Void, Never>, written: Flag) {
        bus.pause()
        let chunk = String(repeating: "x", count: 64 * 1024)
        for _ in 0..<64 {
            try connection.enqueue(
                .signal(path: "/org/haul/Test", interface: "org.haul.Test", member: "Chunk", body: [.string(chunk)])
            )
        }
        let written = Flag()
        let waiting = Task {
            await connection.written()
            written.isSet.withLock { $0 = true }
        }
        return (waiting, written)
    }

    @Test func writtenReturnsOnceTheBusHasReadEveryQueuedMessage() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        await connection.written()  // nothing queued: at once

        let (waiting, written) = try Self.fillQueue(of: connection, on: bus)
        try await Task.sleep(for: .milliseconds(500))
        #expect(!written.isSet.withLock { $0 }, "the bus has read at most what its socket holds")

        bus.resume()
        await waiting.value
        #expect(written.isSet.withLock { $0 })
        await connection.close()
    }

    @Test func closingTheConnectionReleasesAWaitingWritten() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        let (waiting, written) = try Self.fillQueue(of: connection, on: bus)
        try await Task.sleep(for: .milliseconds(200))
        #expect(!written.isSet.withLock { $0 }, "still waiting before the close")
        await connection.close()
        await waiting.value
    }
}
