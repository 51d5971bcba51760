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
    func elements(timeout: Duration = .seconds(10), until condition: ([Element]) -> Bool) async -> [Element] {
        let deadline = ContinuousClock.now + timeout
        while !condition(elements), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return elements
    }

    /// The elements once there are `count` of them (or `timeout` has passed).
    func first(_ count: Int, timeout: Duration = .seconds(10)) async -> [Element] {
        await elements(timeout: timeout) { $0.count >= count }
    }

    /// Waits until the stream has ended (or `timeout` has passed); returns whether it has.
    func finished(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isFinished, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return isFinished
    }
}

/// Polls `condition` until it holds or `timeout` has passed; returns whether it held.
func pollUntil(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
