/// A condition ``waitUntil(_:timeout:every:seen:_:)`` waited for in vain.
package struct WaitTimeout: Error, CustomStringConvertible {
    package let description: String
}

/// Polls `condition` until it holds: the one way the tests wait for something that settles on its own time.
///
/// Throws ``WaitTimeout`` — "timed out after 20.0 seconds waiting for `what`", then what `seen` describes, if given
/// (the state it found instead) — when `condition` still fails once `timeout` has passed; an error thrown by
/// `condition` ends the wait with that error. A zero `interval` only yields between checks, for a test that must act
/// the moment the condition holds.
package func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(10),
    every interval: Duration = .milliseconds(20),
    seen: (() async -> String)? = nil,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            let found = await seen?()
            throw WaitTimeout(
                description: "timed out after \(timeout) waiting for \(what())" + (found.map { "; seen: \($0)" } ?? "")
            )
        }
        if interval == .zero {
            await Task.yield()
        } else {
            try await Task.sleep(for: interval)
        }
    }
}
