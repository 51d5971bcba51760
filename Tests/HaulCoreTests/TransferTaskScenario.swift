import HaulCore

typealias TaskMachine = TransferTaskStateMachine<TestInstant>

/// The inner phases of a task's lifecycle, each reached from a new task by the events a real owner would see.
enum TaskPhase: String, CaseIterable, CustomStringConvertible {
    case new
    /// Running, attempt 1 in flight (started at 0 ms).
    case transferring
    /// Running, attempt 1 failed transiently at 100 ms; retry timer generation 1 armed for 1100 ms.
    case waitingToRetry
    /// Suspended at 200 ms; the transfer has been asked to stop and has not said it has.
    case suspending
    /// Suspended, and the transfer has stopped.
    case suspended
    /// Resumed at 300 ms while the suspended transfer was still stopping.
    case restarting
    /// Cancelled at 200 ms; the transfer has been asked to stop.
    case canceling
    /// Completed successfully at 500 ms.
    case completed

    var description: String { rawValue }

    /// The public state the phase shows.
    var state: TransferTaskState {
        switch self {
        case .new, .suspending, .suspended: .suspended
        case .transferring, .waitingToRetry, .restarting: .running
        case .canceling: .canceling
        case .completed: .completed
        }
    }

    /// A machine in this phase, with the default retry budget.
    func machine() throws -> TaskMachine {
        var machine = TaskMachine()
        guard self != .new else { return machine }
        _ = machine.start(now: ms(0))
        switch self {
        case .new, .transferring:
            break
        case .waitingToRetry:
            _ = machine.transferFailed(.network("reset"), now: ms(100))
        case .suspending:
            _ = try machine.suspend(now: ms(200))
        case .suspended:
            _ = try machine.suspend(now: ms(200))
            _ = machine.transferStopped(now: ms(250))
        case .restarting:
            _ = try machine.suspend(now: ms(200))
            _ = try machine.resume(now: ms(300))
        case .canceling:
            _ = try machine.cancel(now: ms(200))
        case .completed:
            _ = machine.transferSucceeded(now: ms(500))
        }
        return machine
    }
}

/// Entering running after a suspension: saved, published, signalled.
let taskResuming: [TaskMachine.Action] = [.persist, .publishState(.running), .emitDidResume]

/// Entering suspended from running.
let taskSuspending: [TaskMachine.Action] = [.persist, .publishState(.suspended), .emitDidSuspend]

/// Completing with `outcome`: a failed task's partial file goes first.
func taskCompleting(_ outcome: TransferOutcome) -> [TaskMachine.Action] {
    let cleanup: [TaskMachine.Action] = outcome == .success ? [] : [.removePartialFile]
    return cleanup + [.persist, .publishState(.completed), .emitDidComplete(outcome)]
}

let cancelledOutcome = TransferOutcome.failure(.cancelled)
