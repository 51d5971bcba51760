import DBusKit
import HaulTestSupport
import Synchronization
import Testing

/// `written()` waits until the bus has read what was queued, not only until libdbus has it: a bus that reads nothing
/// holds it up, one that reads again lets it return, and so does closing the connection. `written(through:)` waits
/// for what was sent before its mark only.
@Suite(.timeLimit(.minutes(1))) struct WrittenTests {
    final class Flag: Sendable {
        let isSet = Mutex(false)
    }

    /// Pauses `bus` and queues 4 MiB of signals on `connection`, far more than the socket holds, so that most of it
    /// waits in libdbus's queue; returns a `written()` waiting for it, and what it sets once it returns.
    static func fillQueue(
        of connection: DBusConnection, on bus: PrivateBus
    ) async throws -> (waiting: Task<Void, Never>, written: Flag) {
        bus.pause()
        try queueChunks(on: connection)
        return waitForWritten(connection, through: await connection.writeMark())
    }

    /// Queues 4 MiB of signals on `connection`.
    static func queueChunks(on connection: DBusConnection) throws {
        let chunk = String(repeating: "x", count: 64 * 1024)
        for _ in 0..<64 {
            try connection.enqueue(
                .signal(path: "/org/haul/Test", interface: "org.haul.Test", member: "Chunk", body: [.string(chunk)])
            )
        }
    }

    /// A `written(through: mark)`, waiting, and what it sets once it returns.
    static func waitForWritten(
        _ connection: DBusConnection, through mark: DBusConnection.WriteMark
    ) -> (waiting: Task<Void, Never>, written: Flag) {
        let written = Flag()
        let waiting = Task {
            await connection.written(through: mark)
            written.isSet.withLock { $0 = true }
        }
        return (waiting, written)
    }

    /// Checks that `waiting` still waits while the paused `bus` reads nothing, and returns once it reads again.
    static func expectHeldUntilResumed(
        _ waiting: Task<Void, Never>, _ written: Flag, on bus: PrivateBus
    ) async throws {
        try await Task.sleep(for: .milliseconds(500))
        #expect(!written.isSet.withLock { $0 }, "the bus has read at most what its socket holds")
        bus.resume()
        await waiting.value
        #expect(written.isSet.withLock { $0 })
    }

    @Test func writtenReturnsOnceTheBusHasReadEveryQueuedMessage() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        await connection.written()  // nothing queued: at once

        let (waiting, written) = try await Self.fillQueue(of: connection, on: bus)
        try await Self.expectHeldUntilResumed(waiting, written, on: bus)
        await connection.close()
    }

    /// A mark taken before the queue filled up is behind nothing the bus has yet to read; one taken after it waits
    /// for all of it, until the bus reads again.
    @Test func aMarkWaitsForWhatWasSentBeforeItOnly() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        let before = await connection.writeMark()
        bus.pause()
        try Self.queueChunks(on: connection)
        let after = await connection.writeMark()
        #expect(before < after)
        await connection.written(through: before)  // at once, though 4 MiB wait

        let (waiting, written) = Self.waitForWritten(connection, through: after)
        try await Self.expectHeldUntilResumed(waiting, written, on: bus)
        await connection.close()
    }

    @Test func closingTheConnectionReleasesAWaitingWritten() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(address: bus.address)
        let (waiting, written) = try await Self.fillQueue(of: connection, on: bus)
        try await Task.sleep(for: .milliseconds(200))
        #expect(!written.isSet.withLock { $0 }, "still waiting before the close")
        await connection.close()
        await waiting.value
    }
}
