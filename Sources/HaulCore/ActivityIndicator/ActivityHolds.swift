/// Manual activity declared by clients (AF's `incrementActivityCount` / `decrementActivityCount`), counted per owner.
///
/// An owner is the caller's unique bus name (`:1.42`), so that everything a client still holds can be released at
/// once when it exits or crashes. Owners with no holds are not stored.
package struct ActivityHolds: Sendable, Equatable {
    private var holds: [String: UInt32] = [:]

    /// Creates an empty set of holds.
    package init() {}

    /// The sum of every owner's holds, saturating at `UInt32.max` (the D-Bus `ActivityCount` is a `u`).
    package var total: UInt32 {
        holds.values.reduce(0) { sum, count in
            let (result, overflow) = sum.addingReportingOverflow(count)
            return overflow ? .max : result
        }
    }

    /// Whether no owner holds anything.
    package var isEmpty: Bool { holds.isEmpty }

    /// The owners that hold something, sorted.
    package var owners: [String] { holds.keys.sorted() }

    /// How many holds `owner` has (zero for an unknown owner).
    package func count(for owner: String) -> UInt32 {
        holds[owner, default: 0]
    }

    /// Adds one hold for `owner`. Returns false only when that owner already holds `UInt32.max`.
    @discardableResult
    package mutating func increment(_ owner: String) -> Bool {
        let current = holds[owner, default: 0]
        guard current < .max else { return false }
        holds[owner] = current + 1
        return true
    }

    /// Removes one hold of `owner`, clamping at zero for that owner alone (as AF clamps); other owners' holds are
    /// never touched. Returns whether a hold was removed.
    @discardableResult
    package mutating func decrement(_ owner: String) -> Bool {
        guard let current = holds[owner] else { return false }
        holds[owner] = current > 1 ? current - 1 : nil
        return true
    }

    /// Drops every hold of `owner`, for when it left the bus. Returns how many holds it had.
    @discardableResult
    package mutating func release(_ owner: String) -> UInt32 {
        holds.removeValue(forKey: owner) ?? 0
    }
}
