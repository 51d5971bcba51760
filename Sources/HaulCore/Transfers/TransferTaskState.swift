/// The state of a transfer task, as `NSURLSessionTaskState`, spelled as the D-Bus `State` property.
package enum TransferTaskState: String, Sendable, Codable, CaseIterable {
    /// Transferring, or waiting to retry after a transient failure.
    case running
    /// Stopped by the client (or created suspended); `Resume` continues it.
    case suspended
    /// Cancelled by the client; completes once the transfer has stopped and the partial file is gone.
    case canceling
    /// Finished, with a ``TransferOutcome``.
    case completed
}

/// Which way a task moves bytes (D-Bus `Kind`).
package enum TransferKind: String, Sendable, Codable, CaseIterable {
    /// URL → file.
    case download
    /// File → URL.
    case upload
}

/// How a completed task ended. Cancellation is a failure, as `NSURLErrorCancelled` is an error.
package enum TransferOutcome: Sendable, Codable, Equatable {
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
