package import HaulCore

/// Runs attempts of transfers: what the task service starts for each `startTransfer` of a task's lifecycle machine.
/// `TransferAttempts` is hauld's, on async-http-client; a test gives one it completes, fails or holds by hand.
///
/// The service's side: it runs each attempt in a Swift task of its own and cancels that task to stop it.
package protocol AttemptRunner: Sendable {
    /// Runs one attempt of the transfer `record` describes, from where its files stand, telling `reports` how it goes.
    /// Returns once the head it reported, if any, was received. Cancelling the calling task stops the attempt
    /// promptly (nothing more is written): it then ends as ``AttemptResult/failed(_:)`` with
    /// `TransferFailure.cancelled`, or as a success if it finished first.
    func run(_ record: TaskRecord, reports: AttemptReports) async -> AttemptResult

    /// Stops for good, once no attempt runs any more; attempts started afterwards fail as cancelled.
    func shutdown() async
}
