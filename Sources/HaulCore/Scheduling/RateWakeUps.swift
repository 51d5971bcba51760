/// The connections waiting for a ``RateLimiter``'s deadlines, woken by one timer: the limiter's, not one per
/// connection. A sans-I/O machine: the caller arms the timer where ``add(_:until:)`` and ``fire(now:)`` say, and
/// wakes the waiters ``fire(now:)`` returns.
///
/// The limiter puts its deadlines on a grid, so waiters that wait for deadlines close together wait for the same
/// one, and one firing wakes them all. A waiter whose wake-up may come a little late (hauld's progress ticker, while
/// every transfer is held to a limit) rides a firing within its window, so that it costs no wake-up of its own.
///
/// Inlinable, so that hauld's `RateGate` runs it specialized for its waiters (NIO's promises, which this module does
/// not know): generic, each firing looked up the metadata of its tuples at run time. Public, not package: Swift 6.3
/// serializes the body of an inlinable `package` declaration for no other module, so its callers ran it generic.
public struct RateWakeUps<Instant: InstantProtocol, Waiter: Sendable>: Sendable {
    /// A waiter is due at the first firing at or after `earliest`, and the timer fires at `latest` for it at the
    /// latest: the same instant for a connection, a window for a rider (``ride(_:from:until:)``).
    @usableFromInline var waiting: [(earliest: Instant, latest: Instant, waiter: Waiter)] = []
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
        ride(waiter, from: deadline, until: deadline)
    }

    /// `waiter` wakes at the first firing from `earliest` on, for whatever waiter it comes, and at `latest` if none
    /// came by then: it rides a wake-up the timer makes anyway. Returns what ``add(_:until:)`` returns.
    @inlinable public mutating func ride(_ waiter: Waiter, from earliest: Instant, until latest: Instant) -> Instant? {
        let latest = max(earliest, latest)
        waiting.append((earliest, latest, waiter))
        if let armed, armed <= latest { return nil }
        armed = latest
        return latest
    }

    /// Takes the first waiter `matches` out, if one waits: it is not woken.
    @inlinable public mutating func remove(where matches: (Waiter) -> Bool) -> Waiter? {
        guard let index = waiting.firstIndex(where: { matches($0.waiter) }) else { return nil }
        // The armed timer stays: firing early, it wakes nobody and is armed again.
        return waiting.remove(at: index).waiter
    }

    /// The timer fired at `now`: the waiters whose deadline has come (or whose window has begun), in the order they
    /// came, and when to arm the timer next (nil: nobody waits). A timer that fired early wakes nobody and is armed
    /// again.
    @inlinable public mutating func fire(now: Instant) -> (due: [Waiter], next: Instant?) {
        var due: [Waiter] = []
        waiting.removeAll { entry in
            guard entry.earliest <= now else { return false }
            due.append(entry.waiter)
            return true
        }
        armed = waiting.map { $0.latest }.min()
        return (due, armed)
    }
}
