import DBusKit
import Testing

@Suite(.timeLimit(.minutes(1))) struct DictionaryShrinkTests {
    /// A dictionary that held a thousand entries and keeps ten gives back most of its room; one still mostly full
    /// keeps it (no copy on every removal).
    @Test func aSparseDictionaryGivesItsRoomBack() {
        var entries = Dictionary(uniqueKeysWithValues: (0..<1000).map { ($0, String($0)) })
        let full = entries.capacity
        for key in 10..<1000 {
            entries[key] = nil
            entries.shrinkIfSparse()
        }
        #expect(entries.count == 10)
        #expect(entries.capacity < full / 8, "capacity \(entries.capacity), was \(full)")
        #expect(entries == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, String($0)) }))

        var busy = Dictionary(uniqueKeysWithValues: (0..<1000).map { ($0, $0) })
        let capacity = busy.capacity
        busy[0] = nil
        busy.shrinkIfSparse()
        #expect(busy.capacity == capacity)
    }
}
