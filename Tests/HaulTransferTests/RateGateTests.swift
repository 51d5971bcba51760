import Foundation
import HaulCore
import HaulTestSupport
import HaulTransfer
import NIOCore
import Testing

/// Rate limits on the wire, in-process on the transfer client against the test server. A limit can only be kept
/// too well on a loaded machine, never broken: each test checks the lower bound of the time a transfer takes, and
/// only a generous upper bound.
@Suite(.timeLimit(.minutes(3))) struct RateGateTests {
    static let mib = 1 << 20

    /// What every test here needs: the test server, a folder of its own, a transfer client (made with
    /// `configuration`) and a gate; `body` sets the limits. The client is shut down and the folder removed after.
    struct Rig: Sendable {
        let server: TestHTTPServer
        let folder: URL
        let client: TransferClient
        let gate = RateGate()

        func file(_ name: String) -> URL { folder.appendingPathComponent(name) }
    }

    static func withRig(
        _ configuration: TransferClient.Configuration = TransferClient.Configuration(),
        _ body: (Rig) async throws -> Void
    ) async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-rate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rig = Rig(server: server, folder: folder, client: TransferClient(configuration: configuration))
        do {
            try await body(rig)
        } catch {
            await rig.client.shutdown()
            throw error
        }
        await rig.client.shutdown()
    }

    /// Seconds `body` took.
    static func timed(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return RateLimitTiming.seconds(since: start)
    }

    static func download(
        _ client: TransferClient, _ url: String, to partial: URL, rate: RateMeter?, connections: Int = 1
    ) async throws -> UInt64 {
        if connections > 1 {
            return try await client.download(
                url: URL(string: url)!, partialPath: partial.path, connections: connections, plan: nil, validator: nil,
                headers: [:], rate: rate, onHead: { _ in }, onProgress: { _ in }, onPlan: { _ in }
            ).bytesOnDisk
        }
        return try await client.download(
            url: URL(string: url)!, partialPath: partial.path, offset: 0, validator: nil, headers: [:], rate: rate,
            onHead: { _ in }, onProgress: { _ in }
        ).bytesOnDisk
    }

    /// Every connection a limit applies to as it starts runs on the gate's one event loop, so that the limiter's
    /// timer wakes one thread; a transfer no limit applies to, or one under a limit beyond what one core moves easily,
    /// runs wherever async-http-client puts it.
    @Test func limitedConnectionsRunOnTheGatesLoop() {
        let gate = RateGate()
        let meter = gate.meter(for: 1, direction: .download)
        #expect(meter.loop == nil)
        gate.setLimit(1 << 20, of: 1, direction: .download)
        #expect(meter.loop === gate.loop)
        gate.setLimit(0, of: 1, direction: .download)
        #expect(meter.loop == nil)
        gate.setGlobalLimit(RateGate.oneLoopLimit, for: .download)
        #expect(meter.loop === gate.loop)
        gate.setGlobalLimit(RateGate.oneLoopLimit + 1, for: .download)
        #expect(meter.loop == nil, "a limit above what one loop is given")
        gate.setLimit(1 << 20, of: 1, direction: .download)
        #expect(meter.loop === gate.loop, "the tighter limit counts")
        #expect(gate.meter(for: 2, direction: .upload).loop == nil, "the upload direction has no limit")
    }

    /// Under a limit a segment's connection hands its bytes to the disk every fifth of a second of the limit, at
    /// least every MiB, so that the sync before its plan is saved waits for few write-outs; unlimited, or under a
    /// limit of 20 MiB/s or more, every 4 MiB.
    @Test func aLimitedSegmentWritesOutInSmallerChunks() {
        let gate = RateGate()
        let meter = gate.meter(for: 1, direction: .download)
        #expect(meter.segmentWritebackChunk == 4 << 20, "no limit")
        gate.setLimit(5 << 20, of: 1, direction: .download)
        #expect(meter.segmentWritebackChunk == 1 << 20)
        gate.setLimit(10 << 20, of: 1, direction: .download)
        #expect(meter.segmentWritebackChunk == 2 << 20)
        gate.setLimit(100 << 10, of: 1, direction: .download)
        #expect(meter.segmentWritebackChunk == 1 << 20, "never below 1 MiB")
        gate.setLimit(0, of: 1, direction: .download)
        gate.setGlobalLimit(40 << 20, for: .download)
        #expect(meter.segmentWritebackChunk == 4 << 20, "never above 4 MiB")
        gate.setGlobalLimit(10 << 20, for: .download)
        #expect(meter.segmentWritebackChunk == 2 << 20, "the global limit counts")
    }

    /// A ride (hauld's progress ticker under a limit) ends at the limit's timer firing within its window, which the
    /// download needs to go on: so long before the download ends, and far before the window's end.
    @Test func aRideEndsWithTheFiringALimitedDownloadWaitsFor() async throws {
        try await Self.withRig { rig in
            rig.gate.setLimit(UInt64(Self.mib), of: 1, direction: .download)
            let start = ContinuousClock.now
            let download = Task {
                let bytes = try await Self.download(
                    rig.client, rig.server.url("/gen/4m?seed=11"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download)
                )
                return (bytes, ContinuousClock.now)
            }
            let earliest = start.advanced(by: .milliseconds(500))
            // Timed on the gate's loop, as the ride ends.
            let rode = try await rig.gate.ride(from: earliest, until: start.advanced(by: .seconds(600)))
                .map { ContinuousClock.now }.get()
            let (bytes, ended) = try await download.value
            #expect(bytes == UInt64(4 * Self.mib))
            #expect(rode >= earliest)
            #expect(rode < ended, "the ride ended \(rode - ended) after the download")
        }
    }

    /// With no limited connection waiting, a ride ends at its window's end, not before.
    @Test func aRideWithoutAFiringEndsAtItsWindowsEnd() async throws {
        let gate = RateGate()
        let start = ContinuousClock.now
        let latest = start.advanced(by: .milliseconds(200))
        try await gate.ride(from: start.advanced(by: .milliseconds(50)), until: latest).get()
        #expect(ContinuousClock.now >= latest)
    }

    @Test func aCancelledRideFailsAtOnce() async {
        let gate = RateGate()
        let ride = gate.ride(from: .now.advanced(by: .seconds(3600)), until: .now.advanced(by: .seconds(7200)))
        gate.cancelRide(ride)
        await #expect(throws: CancellationError.self) { try await ride.get() }
    }

    @Test func aTaskLimitHoldsADownloadToItsRate() async throws {
        try await Self.withRig { rig in
            rig.gate.setLimit(UInt64(Self.mib), of: 1, direction: .download)
            var size: UInt64 = 0
            let seconds = try await Self.timed {
                size = try await Self.download(
                    rig.client, rig.server.url("/gen/4m?seed=3"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download)
                )
            }
            #expect(size == UInt64(4 * Self.mib))
            #expect(seconds >= RateLimitTiming.least(4 * Self.mib, at: Self.mib), "4 MiB at 1 MiB/s took \(seconds) s")
            #expect(seconds < 30)
        }
    }

    /// Sixteen connections of one task share its limit: more connections do not buy more rate.
    @Test func theConnectionsOfOneTaskShareItsLimit() async throws {
        try await Self.withRig { rig in
            rig.gate.setLimit(UInt64(2 * Self.mib), of: 1, direction: .download)
            let seconds = try await Self.timed {
                _ = try await Self.download(
                    rig.client, rig.server.url("/gen/8m?seed=4"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download), connections: 16
                )
            }
            #expect(try await TestHTTPServer.sha256(ofFile: rig.file("a"))
                == (try await TestHTTPServer.sha256OfGenerated(size: 8 * Self.mib, seed: 4)))
            #expect(
                seconds >= RateLimitTiming.least(8 * Self.mib, at: 2 * Self.mib),
                "8 MiB at 2 MiB/s over 16 connections took \(seconds) s"
            )
        }
    }

    /// Two tasks under a global limit keep to it together.
    @Test func aGlobalLimitHoldsTasksTogether() async throws {
        try await Self.withRig { rig in
            rig.gate.setGlobalLimit(UInt64(2 * Self.mib), for: .download)
            async let first = Self.timed {
                _ = try await Self.download(
                    rig.client, rig.server.url("/gen/3m?seed=5"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download)
                )
            }
            async let second = Self.timed {
                _ = try await Self.download(
                    rig.client, rig.server.url("/gen/3m?seed=6"), to: rig.file("b"),
                    rate: rig.gate.meter(for: 2, direction: .download)
                )
            }
            let (one, two) = try await (first, second)
            // Together under the limit. How they shared it is `RateLimiterFairnessTests`' (in virtual time): on a
            // loaded machine a connection whose event loop is starved asks less often and leaves its share to the
            // other.
            #expect(
                max(one, two) >= RateLimitTiming.least(6 * Self.mib, at: 2 * Self.mib),
                "6 MiB at 2 MiB/s took \(max(one, two)) s"
            )
        }
    }

    /// A connection waiting on a limit asks again within a second: lifting the limit mid-way applies at once.
    @Test func aChangedLimitAppliesToARunningDownload() async throws {
        try await Self.withRig { rig in
            rig.gate.setGlobalLimit(64 * 1024, for: .download)
            let lifted = Task { [gate = rig.gate] in
                try await Task.sleep(for: .seconds(1))
                gate.setGlobalLimit(0, for: .download)
            }
            let seconds = try await Self.timed {
                _ = try await Self.download(
                    rig.client, rig.server.url("/gen/8m?seed=9"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download)
                )
            }
            try await lifted.value
            // At 64 KiB/s the 8 MiB would take 128 s.
            #expect(seconds < 60, "the download took \(seconds) s after its limit was lifted at 1 s")
        }
    }

    @Test func anUploadKeepsToItsLimit() async throws {
        try await Self.withRig { rig in
            let source = rig.file("source")
            try await TestHTTPServer.writeGenerated(size: 3 * Self.mib, seed: 7, to: source)
            rig.gate.setLimit(UInt64(Self.mib), of: 1, direction: .upload)
            var status = 0
            let seconds = try await Self.timed {
                status = try await rig.client.upload(
                    url: URL(string: rig.server.url("/upload/limited"))!, path: source.path, method: .put,
                    headers: [:], rate: rig.gate.meter(for: 1, direction: .upload), onProgress: { _, _ in }
                )
            }
            #expect(status == 201)
            #expect(try await rig.server.stats().uploads("/upload/limited").first?.bytes == 3 * Self.mib)
            #expect(seconds >= RateLimitTiming.least(3 * Self.mib, at: Self.mib), "3 MiB at 1 MiB/s took \(seconds) s")
        }
    }

    /// Plain http through an HTTP proxy goes over hauld's own forward-proxy connection: the limit holds there too.
    @Test func theLimitHoldsThroughAForwardProxy() async throws {
        let proxy = try await TestHTTPServer()
        defer { proxy.stop() }
        var configuration = TransferClient.Configuration()
        configuration.proxies = ProxySettings(environment: ["http_proxy": "http://\(proxy.authority)"])
        try await Self.withRig(configuration) { rig in
            rig.gate.setLimit(UInt64(Self.mib), of: 1, direction: .download)
            let seconds = try await Self.timed {
                _ = try await Self.download(
                    rig.client, rig.server.url("/gen/3m?seed=8"), to: rig.file("a"),
                    rate: rig.gate.meter(for: 1, direction: .download)
                )
            }
            #expect(try await proxy.stats().forwarded.count == 1, "the request went through the proxy")
            #expect(
                seconds >= RateLimitTiming.least(3 * Self.mib, at: Self.mib),
                "3 MiB at 1 MiB/s through a proxy took \(seconds) s"
            )
        }
    }
}
