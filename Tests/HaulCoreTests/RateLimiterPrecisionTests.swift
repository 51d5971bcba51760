import HaulCore
import Testing

/// The contract: over any 10 s window the rate is within ±5 % of the limit for limits from 64 KiB/s up, a changed limit
/// takes effect within a second, and no burst exceeds 400 ms' worth. Simulated readers in virtual
/// time, reading chunks of varying size as fast as they are allowed.
@Suite("Rate limiter precision", .timeLimit(.minutes(2)))
struct RateLimiterPrecisionTests {
    static let limits = [64 * kibibyte, 100 * kibibyte, 1 * mebibyte, 5 * mebibyte, 64 * mebibyte]

    @Test(arguments: limits)
    func aTaskStaysWithinItsOwnLimit(_ limit: Int) {
        var simulation = RateSimulation(readers: [SimulatedReader(id: 1)], ownLimits: [1: limit])
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
    }

    @Test(arguments: limits)
    func tasksTogetherStayWithinTheGlobalLimit(_ limit: Int) {
        let readers = (1...3).map { SimulatedReader(id: $0) }
        var simulation = RateSimulation(globalLimit: limit, readers: readers)
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
    }

    /// The bench's case: 5 MiB/s for 20 s, read in small chunks (16 KiB at most), as a TLS connection delivers them.
    @Test func smallChunksKeepTheRateToo() {
        var reader = SimulatedReader(id: 1)
        reader.maxChunk = 16 * kibibyte
        var simulation = RateSimulation(readers: [reader], ownLimits: [1: 5 * mebibyte])
        simulation.run(seconds: 20)
        #expect(simulation.windowsOff(rate: Double(5 * mebibyte), from: 0, to: 20) == [])
    }

    /// A caller that cannot keep its reads within the grant (64 KiB whatever it is told) still averages the limit:
    /// what it read beyond its grants is owed and waited out.
    @Test(arguments: [256 * kibibyte, 1 * mebibyte])
    func overReadingIsPaidBack(_ limit: Int) {
        var reader = SimulatedReader(id: 1)
        reader.ignoresGrants = true
        var simulation = RateSimulation(globalLimit: limit, readers: [reader], ownLimits: [1: limit])
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(limit), from: 0, to: 30) == [])
    }

    @Test(arguments: [(4 * mebibyte, 1 * mebibyte), (1 * mebibyte, 4 * mebibyte), (64 * kibibyte, 2 * mebibyte)])
    func aChangedGlobalLimitTakesEffectWithinASecond(_ before: Int, _ after: Int) {
        let readers = (1...2).map { SimulatedReader(id: $0) }
        var simulation = RateSimulation(globalLimit: before, readers: readers)
        simulation.changes = [(15, { $0.setGlobalLimit(UInt64(after), now: $1) })]
        simulation.run(seconds: 30)
        #expect(simulation.windowsOff(rate: Double(before), from: 0, to: 15) == [])
        #expect(simulation.windowsOff(rate: Double(after), from: 16, to: 30) == [])
        let secondAfter = Double(simulation.bytes(from: 16, to: 17))
        #expect(abs(secondAfter - Double(after)) <= Double(after) * 0.1, "the second after: \(secondAfter)")
    }

    @Test(arguments: [(2 * mebibyte, 256 * kibibyte), (128 * kibibyte, 3 * mebibyte)])
    func aChangedTaskLimitTakesEffectWithinASecond(_ before: Int, _ after: Int) {
        var simulation = RateSimulation(readers: [SimulatedReader(id: 1)], ownLimits: [1: before])
        simulation.changes = [(12, { $0.setLimit(UInt64(after), of: 1, now: $1) })]
        simulation.run(seconds: 25)
        #expect(simulation.windowsOff(rate: Double(before), from: 0, to: 12) == [])
        #expect(simulation.windowsOff(rate: Double(after), from: 13, to: 25) == [])
    }

    /// Readers that pause (a stalled server) and then read as fast as they may: what piled up meanwhile is at most
    /// 400 ms' worth, for each task's own limit and for the global one.
    @Test(arguments: [64 * kibibyte, 1 * mebibyte, 16 * mebibyte])
    func burstsStayUnder400Milliseconds(_ limit: Int) {
        var readers = (1...4).map { SimulatedReader(id: $0) }
        for index in readers.indices {
            let offset = Double(index) * 0.7
            readers[index].activeDuring = [0..<2 + offset, 6 + offset..<9, 12..<12.5, 15..<20]
        }
        var simulation = RateSimulation(globalLimit: limit, readers: readers)
        simulation.run(seconds: 20)
        // One 10 ms bin of slack: the measurement's own granularity.
        let slack = Double(limit) * 0.01
        #expect(simulation.largestBurst(rate: Double(limit)) <= Double(limit) * 0.4 + slack)

        var alone = RateSimulation(readers: [SimulatedReader(id: 1, activeDuring: [0..<1, 5..<6, 8..<10])],
            ownLimits: [1: limit])
        alone.run(seconds: 10)
        #expect(alone.largestBurst(rate: Double(limit)) <= Double(limit) * 0.4 + slack)
    }

    @Test(arguments: [64 * kibibyte, 16 * mebibyte])
    func noSingleGrantExceeds400Milliseconds(_ limit: Int) {
        var simulation = RateSimulation(globalLimit: limit, readers: [SimulatedReader(id: 1, maxChunk: 1 << 20)],
            ownLimits: [1: limit])
        simulation.run(seconds: 5)
        #expect(simulation.largestGrant <= limit * 2 / 5)
    }
}
