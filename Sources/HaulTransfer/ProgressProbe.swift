import Synchronization

/// Where a running attempt leaves its byte counts. Written from the HTTP client's event loop on every chunk,
/// read by the task service at most ten times a second: a hop to the service's actor per chunk would cost more than
/// the transfer.
package final class ProgressProbe: Sendable {
    package struct Reading: Equatable, Sendable {
        package var bytes: UInt64 = 0
        package var expected: Int64 = -1
    }

    private let value = Mutex(Reading())

    package init() {}

    package var reading: Reading { value.withLock { $0 } }

    package func set(bytes: UInt64) { value.withLock { $0.bytes = bytes } }

    package func set(bytes: UInt64, expected: Int64) {
        value.withLock { $0 = Reading(bytes: bytes, expected: expected) }
    }
}
