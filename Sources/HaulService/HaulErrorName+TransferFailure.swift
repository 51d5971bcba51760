import DBusKit
package import HaulContract
package import HaulCore

/// Where the core's failures become the contract's errors.
extension HaulErrorName {
    /// The contract's error for a kind of transfer failure.
    package init(_ kind: TransferErrorKind) {
        self =
            switch kind {
            case .invalidArgument: .invalidArgument
            case .notFound: .notFound
            case .fileExists: .fileExists
            case .permissionDenied: .permissionDenied
            case .network: .network
            case .http: .http
            case .cancelled: .cancelled
            case .checksumMismatch: .checksumMismatch
            case .diskFull: .diskFull
            case .timeout: .timeout
            }
    }

    /// `org.haul.Haul1.Error.<Kind>` for a transfer failure.
    static func fullName(of kind: TransferErrorKind) -> String { HaulErrorName(kind).fullName }

    /// Runs `body`, answering a failure as the bus error of its kind.
    static func mapping<T>(_ body: () throws(TransferFailure) -> T) throws(DBusError) -> T {
        do {
            return try body()
        } catch {
            throw HaulErrorName(error.kind).error(error.message)
        }
    }
}
