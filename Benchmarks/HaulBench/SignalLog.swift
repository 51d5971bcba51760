import DBusKit
import HaulContract
import Synchronization

/// One signal hauld emitted, stamped when it reached the bench.
struct BusSignal: Sendable {
    let instant: ContinuousClock.Instant
    let path: ObjectPath
    let member: String
    /// The task a Manager signal is about (`TaskDidComplete`, `TaskDidResume`, `TaskDidSuspend`).
    let task: ObjectPath?
    /// `TaskDidComplete`'s error name (empty on success).
    let errorName: String?
    /// `VisibilityChanged`'s argument.
    let visible: Bool?

    init(_ message: DBusMessage, at instant: ContinuousClock.Instant) {
        self.instant = instant
        path = message.path ?? .root
        member = message.member ?? ""
        let first = message.body.first
        let signal = message.member.flatMap(ManagerSignal.init)
        task = signal == nil ? nil : first?.objectPathValue
        errorName = signal == .taskDidComplete ? message.body.dropFirst().first?.stringValue : nil
        visible = message.member == IndicatorSignal.visibilityChanged.rawValue ? first?.boolValue : nil
    }

    var isTaskCompletion: Bool { member == ManagerSignal.taskDidComplete.rawValue }

    var isTaskProgress: Bool { member == "PropertiesChanged" && path.isDescendant(of: HaulBus.tasksPath) }
}

/// Every signal hauld emitted since the bench connected, for counting and for waiting on completions.
///
/// Instants are taken as signals arrive, so polling it late does not skew a measurement.
final class SignalLog: Sendable {
    private let signals = Mutex<[BusSignal]>([])
    /// Completions by task, kept apart from the (long) list so that waiting for hundreds stays cheap.
    private let completions = Mutex<[ObjectPath: BusSignal]>([:])

    func record(_ signal: BusSignal) {
        signals.withLock { $0.append(signal) }
        if let task = signal.task, signal.isTaskCompletion {
            completions.withLock { $0[task] = signal }
        }
    }

    /// The signals that arrived between `start` and `end`.
    func signals(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> [BusSignal] {
        signals.withLock { all in all.filter { $0.instant >= start && $0.instant <= end } }
    }

    /// The completion of every task in `tasks`, or nil while one is missing.
    func completions(of tasks: [ObjectPath]) -> [BusSignal]? {
        completions.withLock { completions in
            var found: [BusSignal] = []
            for task in tasks {
                guard let signal = completions[task] else { return nil }
                found.append(signal)
            }
            return found
        }
    }

    /// The first `VisibilityChanged(visible)` after `instant`.
    func visibility(_ visible: Bool, after instant: ContinuousClock.Instant) -> BusSignal? {
        signals.withLock { all in all.first { $0.visible == visible && $0.instant >= instant } }
    }
}
