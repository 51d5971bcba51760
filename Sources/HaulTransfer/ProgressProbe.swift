import Synchronization

/// Where a running attempt leaves its byte counts. Written from the HTTP client's event loop on every chunk,
/// read by the service ten times a second: a hop to the service's actor per chunk would cost more than the
/// transfer.
final class ProgressProbe: Sendable {
    struct Reading: Equatable, Sendable {
        var bytes: UInt64 = 0
        var expected: Int64 = -1
    }

    private let value = Mutex(Reading())

    var reading: Reading { value.withLock { $0 } }

    func set(bytes: UInt64) { value.withLock { $0.bytes = bytes } }

    func set(bytes: UInt64, expected: Int64) {
        value.withLock { $0 = Reading(bytes: bytes, expected: expected) }
    }
}
