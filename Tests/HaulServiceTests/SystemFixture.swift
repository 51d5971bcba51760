import DBusKit
import Foundation
import HaulTestSupport
import Testing

/// The fake system bus and a client connection to it, for the tests of hauld's system-bus clients.
struct SystemFixture {
    let system: FakeSystemBus
    let connection: DBusConnection

    /// Runs `body` with the fake services (all present but `absent`), then stops everything.
    static func with(absent: Set<FakeSystemBus.Service> = [], _ body: (SystemFixture) async throws -> Void)
        async throws
    {
        let system = try await FakeSystemBus.start(absent: absent)
        defer { system.stop() }
        let connection = try await system.connect()
        do {
            try await body(SystemFixture(system: system, connection: connection))
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }
}

/// Everything an `AsyncStream` delivers, collected in the background, for tests that wait for what they expect.
actor Recording<Element: Sendable & Equatable> {
    private(set) var elements: [Element] = []
    private(set) var isFinished = false

    /// Starts collecting `stream`; the collector ends with the stream.
    static func of(_ stream: AsyncStream<Element>) -> Recording {
        let recording = Recording()
        Task {
            for await element in stream { await recording.append(element) }
            await recording.finish()
        }
        return recording
    }

    private func append(_ element: Element) { elements.append(element) }
    private func finish() { isFinished = true }

    /// The elements once `condition` holds for them, or when `timeout` has passed (the test then sees what came).
    nonisolated func elements(
        timeout: Duration = .seconds(30), until condition: @Sendable ([Element]) -> Bool
    ) async -> [Element] {
        try? await waitUntil("the stream's elements", timeout: timeout) { condition(await self.elements) }
        return await elements
    }

    /// The elements once there are `count` of them (or `timeout` has passed).
    nonisolated func first(_ count: Int, timeout: Duration = .seconds(30)) async -> [Element] {
        await elements(timeout: timeout) { $0.count >= count }
    }

    /// Waits until the stream has ended (or `timeout` has passed); returns whether it has.
    nonisolated func finished(timeout: Duration = .seconds(30)) async -> Bool {
        try? await waitUntil("the stream to end", timeout: timeout) { await self.isFinished }
        return await isFinished
    }
}
