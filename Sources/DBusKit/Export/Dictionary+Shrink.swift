extension Dictionary {
    /// Gives back the room of removed entries once they are most of it: a dictionary keeps the capacity of its largest
    /// size, and a thousand objects or tasks made and forgotten in a burst (a hostile client's) would keep theirs, some
    /// hundred bytes each, for the rest of the process. Amortised: a shrink leaves a third of the room free.
    package mutating func shrinkIfSparse() {
        guard capacity > 64, count < capacity / 4 else { return }
        var smaller = Self(minimumCapacity: count)
        for (key, value) in self { smaller[key] = value }
        self = smaller
    }
}
