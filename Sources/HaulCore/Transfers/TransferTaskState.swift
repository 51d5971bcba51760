/// The state of a transfer task, as `NSURLSessionTaskState`. The bus (`TaskStateName`) and the task record
/// (`TaskRecordNames.swift`) each spell it their own way.
package enum TransferTaskState: Sendable, CaseIterable {
    /// Transferring, or waiting to retry after a transient failure.
    case running
    /// Stopped by the client (or created suspended); `Resume` continues it.
    case suspended
    /// Cancelled by the client; completes once the transfer has stopped and the partial file is gone.
    case canceling
    /// Finished, with a ``TransferOutcome``.
    case completed
}

/// Which way a task moves bytes. The bus (`TaskKindName`) and the task record (`TaskRecordNames.swift`) each spell it
/// their own way.
package enum TransferKind: Sendable, CaseIterable {
    /// URL → file.
    case download
    /// File → URL.
    case upload
}

/// How a completed task ended. Cancellation is a failure, as `NSURLErrorCancelled` is an error.
package enum TransferOutcome: Sendable, Equatable {
    case success
    case failure(TransferFailure)

    /// The failure, or nil on success (D-Bus `ErrorName` and `ErrorMessage` are then empty).
    package var failure: TransferFailure? {
        switch self {
        case .success: nil
        case .failure(let failure): failure
        }
    }
}
