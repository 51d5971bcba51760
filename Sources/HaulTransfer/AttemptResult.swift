package import HaulCore

/// How an attempt ended.
package enum AttemptResult: Sendable, Equatable {
    /// The download's file is complete, checked and in place, `size` bytes long.
    case downloaded(size: UInt64)
    /// The server accepted the upload, answering `status`.
    case uploaded(status: UInt32)
    /// The attempt failed: the lifecycle machine decides whether to retry. `TransferFailure.cancelled` once stopped.
    case failed(TransferFailure)
    /// The file changed on the server under a segmented download, or its server gave no size with its ranges: the
    /// download must start again from zero, on one connection (the service empties the partial file).
    case mustRestartOnOneConnection(TransferFailure)
}
