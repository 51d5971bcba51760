import AsyncHTTPClient
import HaulCore
import NIOCore
import NIOHTTP1

/// Feeds async-http-client's response of one request to a ``ResponseSink``. AHC calls it on the request's event
/// loop, and reads no more of the response until the future a body part returns has succeeded: under a rate limit,
/// that is when the ``RateMeter`` allows.
final class ResponseSinkDelegate<Sink: ResponseSink>: HTTPClientResponseDelegate {
    typealias Response = Sink.Response

    let sink: Sink
    let rate: RateMeter?

    init(_ sink: Sink, rate: RateMeter?) {
        self.sink = sink
        self.rate = rate
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        sink.sent(part.readableBytes)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let headers = head.headers.map { ($0.name, $0.value) }
        let accepted = sink.head(status: Int(head.status.code), headers: headers)
        guard case .success = accepted, let work = sink.headWork() else {
            return task.eventLoop.makeCompletedFuture(accepted.mapError { $0 })
        }
        // AHC passes on no body part before this future succeeds.
        let promise = task.eventLoop.makePromise(of: Void.self)
        promise.completeWithTask { try await work().get() }
        return promise.futureResult
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let written = sink.body(buffer)
        guard case .success = written, let rate else { return task.eventLoop.makeCompletedFuture(written.mapError { $0 }) }
        rate.consumed(buffer.readableBytes)
        return rate.ready(on: task.eventLoop)
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
        sink.abandon()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try sink.finish()
    }
}
