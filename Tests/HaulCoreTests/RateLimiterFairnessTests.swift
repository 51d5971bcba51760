import HaulCore
import Testing

/// Tasks sharing the global limit get fair shares: equal ones when all want more, and what one task does not use —
/// its own limit is lower, or its server is slower — goes to the others.
@Suite("Rate limiter fairness")
struct RateLimiterFairnessTests {
    /// The contract's case: 4 tasks sharing 4 MiB/s get 1 MiB/s each, ±5 %.
    @Test func fourTasksShareFourMebibytesEqually() {
        var simulation = RateSimulation(globalLimit: 4 * mebibyte, readers: (1...4).map { SimulatedReader(id: $0) })
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(4 * mebibyte), from: 0, to: 30) == [])
        for id: UInt32 in 1...4 {
            #expect(simulation.windowsOff(rate: Double(mebibyte), from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
    }

    /// Readers whose chunks differ in size (one reads 4 KiB at a time, another 64 KiB) still get equal bytes.
    @Test func sharesAreEqualInBytesWhateverTheChunkSizes() {
        let readers = [4, 16, 64, 256].enumerated().map { index, chunk in
            SimulatedReader(id: UInt32(index + 1), maxChunk: chunk * kibibyte)
        }
        var simulation = RateSimulation(globalLimit: 2 * mebibyte, readers: readers)
        simulation.run(seconds: 30)
        for id: UInt32 in 1...4 {
            let off = simulation.windowsOff(rate: Double(mebibyte / 2), from: 0, to: 30, readers: [id])
            #expect(off == [], "task \(id)")
        }
    }

    @Test func aTaskWithALowerLimitLeavesItsShareToTheOthers() {
        var simulation = RateSimulation(
            globalLimit: 4 * mebibyte, readers: (1...4).map { SimulatedReader(id: $0) }, ownLimits: [1: 256 * kibibyte]
        )
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(256 * kibibyte), from: 0, to: 30, readers: [1]) == [])
        for id: UInt32 in 2...4 {
            let share = Double(4 * mebibyte - 256 * kibibyte) / 3
            #expect(simulation.windowsOff(rate: share, from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
        #expect(simulation.windowsOff(rate: Double(4 * mebibyte), from: 0, to: 30) == [])
    }

    @Test func aSlowServerLeavesItsShareToTheOthers() {
        var readers = (1...4).map { SimulatedReader(id: $0) }
        readers[0].serverRate = Double(200 * kibibyte)
        var simulation = RateSimulation(globalLimit: 4 * mebibyte, readers: readers)
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(200 * kibibyte), from: 0, to: 30, readers: [1]) == [])
        for id: UInt32 in 2...4 {
            let share = Double(4 * mebibyte - 200 * kibibyte) / 3
            #expect(simulation.windowsOff(rate: share, from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
        #expect(simulation.windowsOff(rate: Double(4 * mebibyte), from: 0, to: 30) == [])
    }

    /// A task that stops reading (its attempt ended) leaves its share at once; one that joins takes a share.
    @Test func sharesFollowTasksComingAndGoing() {
        var readers = (1...2).map { SimulatedReader(id: $0) }
        readers[1].activeDuring = [0..<12]
        var simulation = RateSimulation(globalLimit: 2 * mebibyte, readers: readers)
        simulation.changes = [(12, { $0.remove(2, now: $1) })]
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(mebibyte), from: 0, to: 12, readers: [1]) == [])
        #expect(simulation.windowsOff(rate: Double(2 * mebibyte), from: 12, to: 30, readers: [1]) == [])
    }

    /// Own limits and the global one together: each task gets the smaller of its limit and its fair share.
    @Test func ownLimitsAboveTheFairShareDoNotMatter() {
        var simulation = RateSimulation(
            globalLimit: 3 * mebibyte, readers: (1...3).map { SimulatedReader(id: $0) },
            ownLimits: [1: 2 * mebibyte, 2: 512 * kibibyte]
        )
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(512 * kibibyte), from: 0, to: 30, readers: [2]) == [])
        for id: UInt32 in [1, 3] {
            let share = Double(3 * mebibyte - 512 * kibibyte) / 2
            #expect(simulation.windowsOff(rate: share, from: 0, to: 30, readers: [id]) == [], "task \(id)")
        }
    }
}
