import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Synchronization

/// Ten thousand tasks (issue #21): a hauld of its own, on a bus of its own, with a state folder of its own, so that the
/// other phases neither see its tasks nor pay for them.
extension Bench {
    /// Clients creating the tasks at once, each with `callsInFlight` calls waiting for their answers.
    static let scaleClients = 8
    static let callsInFlight = 16

    func scale() async throws -> ScaleFigures {
        let count = settings.scaleTasks
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = workspace.root.appendingPathComponent("scale-state")
        var hauld = try await HauldProcess(bus: bus, stateDirectory: state, arguments: ["--log-level", "warning"])
        // One client listens to every signal, as a panel does; the others only call. Eight listeners would time
        // the bench's own decoding of eight copies of every signal, on the same two cores as hauld.
        let clients = try await (0..<Self.scaleClients).asyncMap { index in
            try await HauldClient.connect(address: bus.address, listening: index == 0)
        }
        var figures = ScaleFigures(tasks: count, clients: Self.scaleClients)
        do {
            // Tasks that would run for minutes: 48 MiB at 2 MiB/s each.
            let url = server.url(Workspace.throttledFile, throttled: true)
            let start = ContinuousClock.now
            let tasks = try await createSuspended(count, url: url, clients: clients)
            figures.creationPerSecond = Double(tasks.count) / start.duration(to: .now).seconds
            figures.residentBytes = try ProcessSample(pid: hauld.pid).residentBytes

            figures.managedObjectsMilliseconds = try await Self.medianMilliseconds(rounds: 5) {
                let objects = try await clients[0].calls.managedObjects().count
                guard objects >= count else { throw TestSupportError("GetManagedObjects listed \(objects) objects") }
            }
            let floor = try await ManagedObjectsFloor.measure(
                address: bus.address, service: HaulBus.name, path: HaulBus.rootPath.rawValue, rounds: 5
            )
            figures.managedObjectsUndecodedMilliseconds = floor.undecoded
            figures.managedObjectsReplayedMilliseconds = floor.replayed
            figures.managedObjectsBytes = floor.bytes
            figures.listMilliseconds = try await Self.medianMilliseconds(rounds: 3) {
                let result = try await Command.run(
                    Command.built("haul"), ["ls"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
                )
                let lines = result.stdout.split(separator: "\n").count
                guard result.status == 0, lines == count else {
                    throw TestSupportError("haul ls listed \(lines) tasks (status \(result.status)): \(result.stderr)")
                }
            }

            let limit = try await clients[0].calls.property(.maxRunningTasks).uint32Value ?? 0
            figures.maxRunningTasks = Int(limit)
            // The server counts every client's connections, and the bench's own hauld may still keep some from an
            // earlier phase: a sixth "transfer" after the single phase. In a whole run, the idle phase has already
            // waited for them.
            _ = try await pooledConnectionsClosed()
            let server = server
            let watching = Task { try await server.mostConnectionsAtOnce() }
            let answers = try await AnswerWatch.start(address: bus.address)
            figures.resumeAllMilliseconds = try await Self.milliseconds { try await clients[0].calls.call(.resumeAll) }
            try await Task.sleep(for: .seconds(2))
            figures.suspendAllMilliseconds = try await Self.milliseconds {
                try await clients[0].calls.call(.suspendAll)
            }
            figures.resumeAgainMilliseconds = try await Self.milliseconds {
                try await clients[0].calls.call(.resumeAll)
            }
            try await Task.sleep(for: .seconds(2))
            figures.suspendAgainMilliseconds = try await Self.milliseconds {
                try await clients[0].calls.call(.suspendAll)
            }
            watching.cancel()
            figures.mostConnectionsAtOnce = try await watching.value
            figures.slowestAnswerDuringAllMilliseconds = try await answers.stop()

            for client in clients { await client.close() }
            let stopping = ContinuousClock.now
            _ = await hauld.stop()
            figures.sigtermExitMilliseconds = stopping.duration(to: .now).milliseconds

            let restarting = ContinuousClock.now
            hauld = try await HauldProcess(bus: bus, stateDirectory: state, arguments: ["--log-level", "warning"])
            figures.restartToNameMilliseconds = restarting.duration(to: .now).milliseconds
            let client = try await HauldClient.connect(address: bus.address)
            _ = try await client.calls.property(.maxRunningTasks)
            figures.restartToAnswerMilliseconds = restarting.duration(to: .now).milliseconds
            // hauld answers while the restored tasks still rejoin the queue: how long an answer waits meanwhile, and
            // its memory once they have.
            let restoring = try await AnswerWatch.start(address: bus.address)
            try await Task.sleep(for: .seconds(3))
            figures.slowestAnswerAfterRestartMilliseconds = try await restoring.stop()
            figures.restartedResidentBytes = try ProcessSample(pid: hauld.pid).residentBytes
            figures.cancelAllMilliseconds = try await Self.milliseconds { try await client.calls.call(.cancelAll) }
            await client.close()
        } catch {
            for client in clients { await client.close() }
            _ = await hauld.stop()
            throw error
        }
        _ = await hauld.stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: state)
        try workspace.clearDownloads()
        return figures
    }

    /// `count` suspended downloads, created by `clients` at once, each keeping `callsInFlight` calls going.
    private func createSuspended(_ count: Int, url: String, clients: [HauldClient]) async throws -> [ObjectPath] {
        let options: [DownloadOption: DBusValue] = [.startSuspended: .boolean(true)]
        let workspace = workspace
        return try await withThrowingTaskGroup(of: [ObjectPath].self) { group in
            for (index, client) in clients.enumerated() {
                let mine = Array(stride(from: index, to: count, by: clients.count))
                group.addTask {
                    var created: [ObjectPath] = []
                    for batch in stride(from: 0, to: mine.count, by: Self.callsInFlight) {
                        let slice = mine[batch..<min(batch + Self.callsInFlight, mine.count)]
                        created += try await withThrowingTaskGroup(of: ObjectPath.self) { calls in
                            for number in slice {
                                let path = workspace.hauldFile("scale-\(number).bin")
                                calls.addTask { try await client.calls.download(url, to: path, options: options) }
                            }
                            return try await calls.reduce(into: []) { $0.append($1) }
                        }
                    }
                    return created
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    private static func milliseconds(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return start.duration(to: .now).milliseconds
    }

    private static func medianMilliseconds(rounds: Int, _ body: () async throws -> Void) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<rounds { times.append(try await milliseconds(body)) }
        return Statistics.median(times)
    }
}

/// How long a client that only reads waits for hauld's answers while hauld is busy: a `Properties.Get` of the
/// Manager every 20 ms, on a connection of its own, from `start` to `stop`. The call in flight at `stop` is waited
/// for, not cancelled: it may be the slowest.
final class AnswerWatch: Sendable {
    private final class Flag: Sendable {
        let isSet = Mutex(false)
    }

    private let client: HauldClient
    private let stopping = Flag()
    private let asking: Task<Double, any Error>

    private init(client: HauldClient) {
        self.client = client
        let stopping = stopping
        asking = Task {
            var slowest = 0.0
            while !stopping.isSet.withLock({ $0 }) {
                let asked = ContinuousClock.now
                _ = try await client.calls.property(.maxRunningTasks)
                slowest = max(slowest, asked.duration(to: .now).milliseconds)
                try await Task.sleep(for: .milliseconds(20))
            }
            return slowest
        }
    }

    static func start(address: String) async throws -> AnswerWatch {
        AnswerWatch(client: try await HauldClient.connect(address: address, listening: false))
    }

    /// The longest wait for an answer, in milliseconds.
    func stop() async throws -> Double {
        stopping.isSet.withLock { $0 = true }
        let slowest = await asking.result
        await client.close()
        return try slowest.get()
    }
}

extension Sequence {
    /// `map` with an async transform, one element after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
