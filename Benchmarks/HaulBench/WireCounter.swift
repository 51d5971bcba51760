import Foundation
import HaulTestSupport

/// Bytes on the wire to the server: the kernel's `bytes_received` of every established TCP connection to the
/// server's port (`ss -tin`), per connection, sampled while a phase runs. The kernel counts a byte when it arrives,
/// before hauld reads it, so these are the server's bytes as the network carried them, not hauld's own account.
struct WireCounter: Sendable {
    /// One reading: seconds since the counter started, and each connection's bytes (by its local address).
    struct Sample: Sendable {
        let seconds: Double
        let bytes: [String: Int]
    }

    let port: Int
    let start: ContinuousClock.Instant

    /// Reads every `interval` until `seconds` have passed since `start`. `baseline`, a sample taken before the
    /// transfers began, holds what connections kept from earlier transfers (a pooled connection's count goes on).
    func record(
        until seconds: Double, every interval: Duration = .milliseconds(250), baseline: Sample? = nil
    ) async throws -> WireRecord {
        var samples: [Sample] = []
        while start.duration(to: .now).seconds < seconds {
            samples.append(try await sample())
            try await Task.sleep(for: interval)
        }
        samples.append(try await sample())
        return WireRecord(samples: samples, baseline: baseline?.bytes ?? [:])
    }

    /// Stamped halfway through the `ss` run, which takes a few milliseconds.
    func sample() async throws -> Sample {
        let before = ContinuousClock.now
        let result = try await Command.run("ss", ["-tinH", "state", "established", "dport", "=", ":\(port)"])
        let after = ContinuousClock.now
        guard result.status == 0 else { throw TestSupportError("ss failed (\(result.status)): \(result.stderr)") }
        let middle = start.duration(to: before).seconds + before.duration(to: after).seconds / 2
        return Sample(seconds: middle, bytes: Self.parse(result.stdout))
    }

    /// `ss -tinH state established` prints each connection on a line (`Recv-Q Send-Q local peer`), then its details
    /// on an indented one, among them `bytes_received:N`.
    static func parse(_ output: String) -> [String: Int] {
        var bytes: [String: Int] = [:]
        var connection: String?
        for line in output.split(separator: "\n") {
            if line.first?.isWhitespace == false {
                let columns = line.split(whereSeparator: \.isWhitespace)
                connection = columns.count >= 4 ? String(columns[2]) : nil
            } else if let current = connection,
                let field = line.split(whereSeparator: \.isWhitespace).first(where: {
                    $0.hasPrefix("bytes_received:")
                })
            {
                bytes[current] = Int(field.dropFirst("bytes_received:".count))
            }
        }
        return bytes
    }
}

/// A run of wire samples, and the rates over windows of it.
struct WireRecord: Sendable {
    let samples: [WireCounter.Sample]
    /// Each connection's bytes before the run (``WireCounter/record(until:every:baseline:)``).
    var baseline: [String: Int] = [:]

    /// Bytes received in the run: every connection's count at the last sample, less its count before the run.
    var totalBytes: Int {
        (samples.last?.bytes ?? [:]).reduce(0) { total, connection in
            total + connection.value - (baseline[connection.key] ?? 0)
        }
    }

    /// Each connection's bytes at the last sample at or before `seconds`: a connection keeps its last count once it
    /// is gone, and counts 0 before it appears.
    func bytes(at seconds: Double) -> [String: Int] {
        var latest: [String: Int] = [:]
        for sample in samples where sample.seconds <= seconds {
            latest.merge(sample.bytes) { $1 }
        }
        return latest
    }

    /// Each connection's bytes per second between two instants (those that received nothing are left out).
    func connectionRates(from start: Double, to end: Double) -> [Double] {
        let (first, last) = (bytes(at: start), bytes(at: end))
        let (from, to) = (sampleTime(atOrBefore: start), sampleTime(atOrBefore: end))
        let seconds = max(to - from, 1e-9)
        return last.keys.sorted().compactMap { key in
            let received = (last[key] ?? 0) - (first[key] ?? 0)
            return received > 0 ? Double(received) / seconds : nil
        }
    }

    /// All connections' bytes per second between two instants (those of the samples at or before them).
    func rate(from start: Double, to end: Double) -> Double {
        connectionRates(from: start, to: end).reduce(0, +)
    }

    /// Of every window `length` seconds long that starts at a sample between `start` and `end − length`, the rate
    /// furthest from `target`.
    func worstWindowRate(from start: Double, to end: Double, length: Double, target: Double) -> Double {
        let starts = samples.map(\.seconds).filter { $0 >= start && $0 + length <= end + 1e-9 }
        let rates = starts.map { rate(from: $0, to: $0 + length) }
        return rates.max { abs($0 - target) < abs($1 - target) } ?? 0
    }

    private func sampleTime(atOrBefore seconds: Double) -> Double {
        samples.last { $0.seconds <= seconds }?.seconds ?? 0
    }
}
