import HaulCore
import Testing

@Suite("Activity holds", .timeLimit(.minutes(2)))
struct ActivityHoldsTests {
    @Test func startsEmpty() {
        let holds = ActivityHolds()
        #expect(holds.total == 0)
        #expect(holds.isEmpty)
        #expect(holds.owners == [])
        #expect(holds.count(for: ":1.1") == 0)
    }

    @Test func countsPerOwner() {
        var holds = ActivityHolds()
        #expect(holds.increment(":1.1") == true)
        #expect(holds.increment(":1.1") == true)
        #expect(holds.increment(":1.2") == true)
        #expect(holds.count(for: ":1.1") == 2)
        #expect(holds.count(for: ":1.2") == 1)
        #expect(holds.total == 3)
        #expect(holds.owners == [":1.1", ":1.2"])
    }

    @Test func decrementClampsAtZeroForThatOwnerOnly() {
        var holds = ActivityHolds()
        holds.increment(":1.1")
        holds.increment(":1.2")
        holds.increment(":1.2")
        #expect(holds.decrement(":1.1") == true)
        #expect(holds.decrement(":1.1") == false, "a decrement below zero changes nothing")
        #expect(holds.decrement(":1.1") == false)
        #expect(holds.count(for: ":1.1") == 0)
        #expect(holds.count(for: ":1.2") == 2, "other owners' holds are never touched")
        #expect(holds.total == 2)
    }

    @Test func decrementOfAnUnknownOwnerChangesNothing() {
        var holds = ActivityHolds()
        holds.increment(":1.5")
        let before = holds
        #expect(holds.decrement(":1.9") == false)
        #expect(holds == before)
    }

    @Test func ownersWithNoHoldsAreNotStored() {
        var holds = ActivityHolds()
        holds.increment(":1.1")
        holds.decrement(":1.1")
        #expect(holds.isEmpty)
        #expect(holds.owners == [])
        #expect(holds == ActivityHolds())
    }

    @Test func releaseDropsEverythingAnOwnerHeld() {
        var holds = ActivityHolds()
        for _ in 0..<5 { holds.increment(":1.7") }
        holds.increment(":1.8")
        #expect(holds.release(":1.7") == 5)
        #expect(holds.count(for: ":1.7") == 0)
        #expect(holds.owners == [":1.8"])
        #expect(holds.total == 1)
        #expect(holds.release(":1.7") == 0, "releasing twice finds nothing")
        #expect(holds.release(":1.99") == 0)
    }

    @Test func totalsWithManyOwners() {
        var holds = ActivityHolds()
        var expected: UInt32 = 0
        for owner in 0..<1000 {
            for _ in 0..<(owner % 7) {
                holds.increment(":1.\(owner)")
                expected += 1
            }
        }
        #expect(holds.total == expected)
        #expect(holds.owners.count == 1000 - (1000 + 6) / 7)
        for owner in stride(from: 0, to: 1000, by: 2) {
            expected -= holds.release(":1.\(owner)")
        }
        #expect(holds.total == expected)
        for owner in 0..<1000 {
            if holds.decrement(":1.\(owner)") { expected -= 1 }
        }
        #expect(holds.total == expected)
    }
}
