/// The connections waiting for a ``RateLimiter``'s deadlines, woken by one timer: the limiter's, not one per
/// connection. A sans-I/O machine: the caller arms the timer where ``add(_:until:)`` and ``fire(now:)`` say, and
/// wakes the waiters ``fire(now:)`` returns.
///
/// The limiter puts its deadlines on a grid, so waiters that wait for deadlines close together wait for the same
/// one, and one firing wakes them all.
///
/// Inlinable, so that hauld's `RateGate` runs it specialized for its waiters (NIO's promises, which this module does
/// not know): generic, each firing looked up the metadata of its tuples at run time. Public, not package: Swift 6.3
/// serializes the body of an inlinable `package` declaration for no other module, so its callers ran it generic.
public struct RateWakeUps<Instant: InstantProtocol, Waiter: Sendable>: Sendable {
    @usableFromInline var waiting: [(deadline: Instant, waiter: Waiter)] = []
    /// When the one timer is armed to fire, if it is (``timer``).
    @usableFromInline var armed: Instant?

    @inlinable public init() {}

    /// When the one timer is armed to fire, if it is.
    @inlinable public var timer: Instant? { armed }

    /// How many waiters wait.
    @inlinable public var count: Int { waiting.count }

    /// `waiter` waits until `deadline`. Returns when to arm the timer, replacing the armed one, or nil when the armed
    /// one fires no later.
    @inlinable public mutating func add(_ waiter: Waiter, until deadline: Instant) -> Instant? {
        waiting.append((deadline, waiter))
        if let armed, armed <= deadline { return nil }
        armed = deadline
        return deadline
    }

    /// The timer fired at `now`: the waiters whose deadline has come, in the order they came, and when to arm the
    /// timer next (nil: nobody waits). A timer that fired early wakes nobody and is armed again.
    @inlinable public mutating func fire(now: Instant) -> (due: [Waiter], next: Instant?) {
        var due: [Waiter] = []
        waiting.removeAll { entry in
            guard entry.deadline <= now else { return false }
            due.append(entry.waiter)
            return true
        }
        armed = waiting.map { $0.deadline }.min()
        return (due, armed)
    }
}
