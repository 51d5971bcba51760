import HaulCore
import HaulTestSupport
import Testing

typealias Limiter = RateLimiter<TestInstant>

let kibibyte = 1024
let mebibyte = 1024 * 1024

/// One task reading through the limiter as a transfer will: it asks before each read, reads what it was granted (or
/// less: a socket read brings what has arrived, in chunks of varying size), reports it, and waits when told to.
/// A reader that `reservesGrants` does as hauld's `RateMeter`: it reports a whole grant as it takes it, reads it over
/// as many reads as it takes (the last may overdraw it), and asks again only when it is spent.
struct SimulatedReader {
    let id: UInt32
    /// How fast the server sends, in bytes per second; nil for a server faster than any limit.
    var serverRate: Double?
    /// The largest chunk one socket read brings.
    var maxChunk = 64 * kibibyte
    /// Reads exactly `maxChunk` whatever the grant: a caller that cannot bound its reads.
    var ignoresGrants = false
    var reservesGrants = false
    /// When the reader reads (seconds): outside these intervals it asks nothing and reads nothing.
    var activeDuring: [Range<Double>] = [0..<Double.infinity]

    var nextAsk = Duration.zero
    /// Among readers asking at the same instant, the lower turn asks first: readers woken together ask in the order
    /// the timer woke them, as hauld's connections do.
    var turn = 0
    /// What a reader that reserves grants still holds of them (below zero: read beyond them, not yet reported).
    var held = 0
    var arrived = 0.0
    var lastArrival = Duration.zero
    /// Bytes read per 10 ms bin.
    var bins: [Int] = []
}

/// A virtual-time run of readers against one limiter: no sleeps, every read at an exact instant. Readers that wait
/// are woken by one timer for the limiter, as in hauld (`RateWakeUps`).
struct RateSimulation {
    static let bin = Duration.milliseconds(10)
    /// Later than any run: a reader that waits for the timer, or for nothing.
    static let never = Duration.seconds(1_000_000)

    var limiter: Limiter
    var readers: [SimulatedReader]
    var wakeUps = RateWakeUps<TestInstant, Int>()
    /// When the limiter's timer fired.
    var timerFirings: [Duration] = []
    /// Every grant a reader that reserves grants took, in bytes.
    var grants: [Int] = []
    /// How often readers asked the limiter.
    var asks = 0
    private var turns = 0
    var random = SplitMix64(seed: 42)
    /// Changes applied at given instants (seconds), in order.
    var changes: [(at: Double, change: (inout Limiter, TestInstant) -> Void)] = []
    var largestGrant = 0

    init(globalLimit: Int = 0, readers: [SimulatedReader], ownLimits: [UInt32: Int] = [:]) {
        limiter = Limiter(globalLimit: UInt64(globalLimit), now: ms(0))
        for reader in readers {
            limiter.add(reader.id, limit: UInt64(ownLimits[reader.id] ?? 0), now: ms(0))
        }
        self.readers = readers
    }

    mutating func run(seconds: Double) {
        let end = Duration.seconds(seconds)
        let binCount = Int(end / Self.bin)
        for index in readers.indices { readers[index].bins = Array(repeating: 0, count: binCount) }
        var pending = changes[...]
        while let index = readers.indices.min(by: {
            (readers[$0].nextAsk, readers[$0].turn) < (readers[$1].nextAsk, readers[$1].turn)
        }) {
            let timer = wakeUps.timer?.offset ?? Self.never
            let now = min(readers[index].nextAsk, timer)
            guard now < end else { break }
            while let next = pending.first, Duration.seconds(next.at) <= now {
                next.change(&limiter, TestInstant(.seconds(next.at)))
                pending = pending.dropFirst()
            }
            if timer <= readers[index].nextAsk {
                timerFirings.append(now)
                for woken in wakeUps.fire(now: TestInstant(now)).due {
                    turns += 1
                    readers[woken].nextAsk = now
                    readers[woken].turn = turns
                }
            } else {
                step(index, now: now)
            }
        }
    }

    /// How often the limiter's timer fired per second, over the whole run.
    func timerFiringsPerSecond(seconds: Double) -> Double { Double(timerFirings.count) / seconds }

    private mutating func step(_ index: Int, now: Duration) {
        var reader = readers[index]
        defer { readers[index] = reader }
        let seconds = now / .seconds(1)
        guard reader.activeDuring.contains(where: { $0.contains(seconds) }) else {
            let resume = reader.activeDuring.map(\.lowerBound).filter { $0 > seconds }.min() ?? .infinity
            // Idle but still an attempt in flight (a stalled server): the worst case for bursts afterwards.
            reader.nextAsk = resume.isFinite ? .seconds(resume) : Self.never
            return
        }
        if let rate = reader.serverRate {
            reader.arrived = min(reader.arrived + rate * ((now - reader.lastArrival) / .seconds(1)), 4 * rate)
            reader.lastArrival = now
            // The socket becomes readable when a few segments have arrived.
            let readable = 4.0 * Double(kibibyte)
            guard reader.arrived >= readable else {
                reader.nextAsk = now + .seconds((readable - reader.arrived) / rate) + .microseconds(1)
                return
            }
        }
        let at = TestInstant(now)
        if reader.reservesGrants {
            if reader.held <= 0 {
                asks += 1
                if reader.held < 0 { limiter.consumed(-reader.held, by: reader.id, now: at) }
                reader.held = 0
                switch limiter.permit(for: reader.id, now: at) {
                case .wait(let deadline):
                    #expect(deadline > at, "a wait must move time forward")
                    _ = wakeUps.add(index, until: deadline)
                    reader.nextAsk = Self.never
                    return
                case .read(let maxBytes):
                    limiter.consumed(maxBytes, by: reader.id, now: at)
                    reader.held = maxBytes
                    grants.append(maxBytes)
                    largestGrant = max(largestGrant, maxBytes)
                case .unlimited:
                    Issue.record("a limited reader was told it is unlimited")
                    reader.nextAsk = Self.never
                    return
                }
            }
            // A socket read brings what has arrived, whatever is left of the grant: the last read may overdraw it.
            var bytes = Int.random(in: 1...reader.maxChunk, using: &random)
            if reader.serverRate != nil { bytes = min(bytes, Int(reader.arrived)) }
            reader.arrived -= Double(bytes)
            reader.held -= bytes
            let bin = Int(now / Self.bin)
            if bin < reader.bins.count { reader.bins[bin] += bytes }
            return
        }
        asks += 1
        switch limiter.permit(for: reader.id, now: at) {
        case .wait(let deadline):
            #expect(deadline > at, "a wait must move time forward")
            #expect(at.duration(to: deadline) <= Limiter.maximumWait)
            _ = wakeUps.add(index, until: deadline)
            reader.nextAsk = Self.never
        case .read(let maxBytes):
            #expect(maxBytes >= 1)
            largestGrant = max(largestGrant, maxBytes)
            var bytes = Int.random(in: 1...reader.maxChunk, using: &random)
            if reader.ignoresGrants { bytes = reader.maxChunk } else { bytes = min(bytes, maxBytes) }
            if reader.serverRate != nil { bytes = min(bytes, Int(reader.arrived)) }
            reader.arrived -= Double(bytes)
            limiter.consumed(bytes, by: reader.id, now: at)
            let bin = Int(now / Self.bin)
            if bin < reader.bins.count { reader.bins[bin] += bytes }
            // As fast as allowed: the next read follows at once.
        case .unlimited:
            Issue.record("a limited reader was told it is unlimited")
            reader.nextAsk = Self.never
        }
    }

    /// Bytes `readers` (all by default) read in [from, to) seconds.
    func bytes(from: Double, to: Double, readers ids: [UInt32]? = nil) -> Int {
        let first = Int((from * 100).rounded()), last = Int((to * 100).rounded())
        return readers.filter { ids?.contains($0.id) ?? true }.reduce(0) { sum, reader in
            sum + reader.bins[max(first, 0)..<min(last, reader.bins.count)].reduce(0, +)
        }
    }

    /// Every 10 s window starting in [from, to − 10] (every quarter second) whose rate is off `rate` by more than
    /// `tolerance`, as readable descriptions; empty when all are within.
    func windowsOff(rate: Double, from: Double, to: Double, readers ids: [UInt32]? = nil, tolerance: Double = 0.05)
        -> [String]
    {
        var off: [String] = []
        for start in stride(from: from, through: to - 10, by: 0.25) {
            let measured = Double(bytes(from: start, to: start + 10, readers: ids)) / 10
            if abs(measured - rate) > rate * tolerance {
                off.append("[\(start), \(start + 10)): \(Int(measured)) B/s for \(Int(rate))")
            }
        }
        return off
    }

    /// The largest excess of any interval of up to `longest` seconds over `rate` × its length: the largest burst.
    func largestBurst(rate: Double, longest: Double = 2, readers ids: [UInt32]? = nil) -> Double {
        let chosen = readers.filter { ids?.contains($0.id) ?? true }
        guard let count = chosen.first?.bins.count else { return 0 }
        let total = (0..<count).map { bin in chosen.reduce(0) { $0 + $1.bins[bin] } }
        let span = Int(longest * 100)
        var worst = 0.0
        for start in 0..<count {
            var sum = 0
            for end in start..<min(start + span, count) {
                sum += total[end]
                worst = max(worst, Double(sum) - rate * Double(end - start + 1) / 100)
            }
        }
        return worst
    }
}
