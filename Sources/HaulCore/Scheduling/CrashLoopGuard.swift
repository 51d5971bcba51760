/// The crash-loop guard of one task: whatever in a task brings its owner down (a bug reached through a URL, a
/// redirect, a server's answer) must not keep the owner in a crash loop.
///
/// ``interruptedRuns`` counts the unclean exits of the owner (a crash, SIGKILL) in a row that cut an attempt of this
/// task short. It goes up by one when a run of the owner starts an attempt of the task (and only then: a task the queue
/// holds back has nothing in flight that a crash could cut short), and back to 0 when an attempt ends by itself or the
/// owner stops cleanly, so a record read after a crash tells how many runs in a row died with the attempt in flight.
/// The owner saves the count before it starts the attempt (a crash within milliseconds of a start may be counted one
/// run late). A task restored running after ``limit`` of them is held suspended with a ``notice`` instead of being
/// started again; a `Resume` starts it again.
package struct CrashLoopGuard: Sendable, Equatable {
    /// Runs of the owner in a row, the current one included while an attempt is in flight, in which an attempt of
    /// the task was in flight and never ended.
    package private(set) var interruptedRuns: UInt32
    /// Why the owner itself suspended the task, for clients (D-Bus `ErrorMessage`); nil otherwise, and cleared when
    /// the task runs again or completes.
    package private(set) var notice: String?
    /// Whether ``interruptedRuns`` counts the current run.
    private var countsThisRun = false

    /// Unclean exits in a row with an attempt in flight after which a restored task is not started again.
    package static var limit: UInt32 { 2 }
    /// The ``notice`` of a task the guard suspended.
    package static var trippedNotice: String {
        "hauld exited unexpectedly twice in a row while this transfer was in flight, so it was not started again; "
            + "Resume continues it"
    }

    /// A guard as a task's record left it (0 and nil for a new task).
    package init(interruptedRuns: UInt32 = 0, notice: String? = nil) {
        self.interruptedRuns = interruptedRuns
        self.notice = notice
    }

    /// The task was restored running: returns false, with the count back to 0 and the ``notice`` set, when
    /// ``limit`` unclean exits in a row cut it short and it must stay suspended.
    package mutating func mayContinueRestored() -> Bool {
        guard interruptedRuns >= Self.limit else { return true }
        interruptedRuns = 0
        notice = Self.trippedNotice
        return false
    }

    /// An attempt starts: an unclean exit from now on cuts it short, so the current run counts.
    package mutating func attemptStarted() {
        guard !countsThisRun else { return }
        // Saturating: a count read from a damaged record must not trap.
        interruptedRuns = interruptedRuns == .max ? .max : interruptedRuns + 1
        countsThisRun = true
    }

    /// The attempt in flight ended by itself (or was stopped): the owner survived it.
    package mutating func attemptEnded() {
        interruptedRuns = 0
        countsThisRun = false
    }

    /// The task runs again at its client's word (`Resume`, `Retry`), or completed: the notice has had its say.
    package mutating func clearNotice() {
        notice = nil
    }

    /// The owner stops cleanly, its attempts with it: the run ended without an unclean exit.
    package mutating func ownerStoppingCleanly() {
        attemptEnded()
    }
}
