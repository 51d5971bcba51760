import HaulCore
import NIOCore

/// What one request's response goes to, whichever HTTP stack carries it (async-http-client, or the forward-proxy
/// path for plain http through an HTTP proxy). Every call returns at once: a sink writes synchronously, so the
/// stack reads no more than the disk has taken.
protocol ResponseSink: Sendable {
    associatedtype Response: Sendable

    /// The response head; a failure ends the request.
    func head(status: Int, headers: [(String, String)]) -> Result<Void, TransferFailure>
    /// What is left to do, once `head` accepted a response, before its body may come (naming the file); nil when
    /// nothing is. The HTTP stack holds the body back until it returns, and a failure ends the request.
    func headWork() -> (@Sendable () async -> Result<Void, TransferFailure>)?
    /// A part of the response body; a failure ends the request.
    func body(_ buffer: ByteBuffer) -> Result<Void, TransferFailure>
    /// Request body bytes handed to the connection (uploads).
    func sent(_ count: Int)
    /// The request failed before its end.
    func abandon()
    /// The response ended cleanly.
    func finish() throws(TransferFailure) -> Response
}

extension ResponseSink {
    func sent(_ count: Int) {}
    func headWork() -> (@Sendable () async -> Result<Void, TransferFailure>)? { nil }
}
