/// A binary min-heap: the smallest element first, O(log n) to push or pop.
///
/// The scheduler's queues use it with lazy deletion: an entry that no longer matches its task is left in place and
/// skipped when it reaches the top, so that taking a task out of the middle costs nothing.
struct BinaryHeap<Element: Comparable & Sendable>: Sendable {
    private var elements: [Element] = []
    /// The count after the last sweep.
    private var countAfterSweep = 0

    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let smallest = elements.removeLast()
        siftDown(from: 0)
        return smallest
    }

    /// Pushes `element`, and drops the stale elements (those `isLive` refuses) once the heap has doubled since the last
    /// sweep: what lazy deletion leaves behind stays bounded, and a sweep costs no more than the pushes before it.
    mutating func push(_ element: Element, sweepingUnless isLive: (Element) -> Bool) {
        push(element)
        guard elements.count > 2 * countAfterSweep + 64 else { return }
        elements.removeAll { !isLive($0) }
        for index in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
        countAfterSweep = elements.count
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < elements.count, elements[left] < elements[smallest] { smallest = left }
            if right < elements.count, elements[right] < elements[smallest] { smallest = right }
            guard smallest != parent else { return }
            elements.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
