/// Why a transfer request was refused before anything started.
package enum TransferRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidArgument(String)
    case unsupportedScheme(String)

    package var description: String {
        switch self {
        case .invalidArgument(let message): message
        case .unsupportedScheme(let scheme): "unsupported URL scheme '\(scheme)': only http and https are supported"
        }
    }
}
