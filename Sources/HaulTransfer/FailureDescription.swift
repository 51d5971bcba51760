import AsyncHTTPClient
import Glibc
import HaulCore
import NIOCore
import NIOPosix
import NIOSSL

/// Turns what the HTTP stack throws into a ``TransferFailure`` whose message is a sentence about the server or proxy
/// involved ("connection refused by 127.0.0.1:1"), not the stack's debug output.
///
/// A refused connection, a failed handshake or a proxy's refusal ends the attempt at once (async-http-client does
/// not retry connecting); whether the task tries again is the retry policy's decision, through ``isTransient``.
struct FailureDescription {
    /// Where the attempt connected to: the server (`host:port`), or the proxy in front of it (`the proxy host:port`).
    let peer: String
    /// The server the request is for (`host:port`).
    let server: String
    /// The proxy in front of the server, if any (shown without its password).
    let proxy: String?
    let readTimeout: Duration
    let connectTimeout: Duration
    let trust: TrustStore

    func failure(for error: any Error) -> TransferFailure {
        if let failure = error as? TransferFailure { return failure }
        if let error = error as? HTTPClientError { return failure(for: error) }
        if let error = error as? NIOConnectionError { return failure(for: error) }
        if let error = error as? IOError { return .network(sentence(errno: error.errnoCode)) }
        if let error = error as? ChannelError { return failure(for: error) }
        if let error = error as? NIOSSLError { return failure(for: error) }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return permanent("the certificate of \(server) is for another host name")
        }
        return .network("the transfer with \(peer) failed: \(error)")
    }

    private func failure(for error: HTTPClientError) -> TransferFailure {
        switch error {
        case .connectTimeout:
            return .timeout("could not connect to \(peer) within \(seconds(connectTimeout))")
        case .readTimeout:
            return .timeout("\(server) sent nothing for \(seconds(readTimeout))")
        case .deadlineExceeded:
            return .timeout("\(server) did not answer in time")
        case .tlsHandshakeTimeout:
            return .timeout("the TLS handshake with \(server) did not finish in time")
        case .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timeout("\(peer) did not answer in time")
        case .remoteConnectionClosed:
            return .network("\(server) closed the connection before the response was complete")
        case .proxyAuthenticationRequired:
            var failure = permanent(
                "\(peer) answered 407 Proxy Authentication Required: give it credentials in the proxy URL "
                    + "(http://user:password@host:port)"
            )
            failure.httpStatus = 407
            return failure
        case .invalidProxyResponse:
            return .network("\(peer) refused to open a tunnel to \(server)")
        case .cancelled:
            return .cancelled
        case .invalidURL, .emptyHost, .emptyScheme:
            return TransferFailure(kind: .invalidArgument, message: "the URL cannot be requested", isTransient: false)
        case .bodyLengthMismatch:
            return .network("\(server) sent a body of another length than it announced")
        default:
            return .network("the transfer with \(server) failed: \(error)")
        }
    }

    private func failure(for error: NIOConnectionError) -> TransferFailure {
        if let first = error.connectionErrors.first {
            if let io = first.error as? IOError { return .network(sentence(errno: io.errnoCode)) }
            if let channel = first.error as? ChannelError { return failure(for: channel) }
            return .network("could not connect to \(peer): \(first.error)")
        }
        if error.dnsAError != nil || error.dnsAAAAError != nil {
            return .network("could not resolve the host name of \(peer)")
        }
        return .network("could not connect to \(peer)")
    }

    private func failure(for error: ChannelError) -> TransferFailure {
        switch error {
        case .connectTimeout:
            return .timeout("could not connect to \(peer) within \(seconds(connectTimeout))")
        case .eof, .ioOnClosedChannel, .alreadyClosed, .inputClosed, .outputClosed:
            return .network("\(server) closed the connection before the response was complete")
        default:
            return .network("the connection to \(peer) failed: \(error)")
        }
    }

    private func failure(for error: NIOSSLError) -> TransferFailure {
        switch error {
        case .handshakeFailed(let reason):
            let detail = String(describing: reason)
            if detail.contains("CERTIFICATE_VERIFY_FAILED") {
                return permanent("the certificate of \(server) is not trusted: no CA in \(trust) vouches for it")
            }
            return .network("the TLS handshake with \(server) failed (\(Self.boringSSLReason(detail)))")
        case .uncleanShutdown:
            return .network("\(server) closed the TLS connection before the response was complete")
        case .noSuchFilesystemObject, .failedToLoadCertificate:
            return permanent("the trusted certificates cannot be loaded from \(trust)")
        default:
            return .network("the TLS connection with \(server) failed (\(error))")
        }
    }

    /// A socket error as a sentence about the peer.
    func sentence(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused by \(peer)"
        case ECONNRESET: "connection reset by \(peer)"
        case ENETUNREACH: "the network of \(peer) is unreachable"
        case EHOSTUNREACH: "\(peer) is unreachable"
        case ETIMEDOUT: "the connection to \(peer) timed out"
        case EPIPE: "\(peer) closed the connection"
        default: "the connection to \(peer) failed: \(String(cString: strerror(code)))"
        }
    }

    private func permanent(_ message: String) -> TransferFailure {
        TransferFailure(kind: .network, message: message, isTransient: false)
    }

    private func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }

    /// The reason BoringSSL names (`…:OPENSSL_internal:WRONG_VERSION_NUMBER`), lower-cased with spaces.
    static func boringSSLReason(_ detail: String) -> String {
        guard let range = detail.firstRange(of: "OPENSSL_internal:") else { return detail }
        let reason = detail[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return reason.isEmpty ? detail : reason.lowercased().replacing("_", with: " ")
    }
}
