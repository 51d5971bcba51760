import AsyncHTTPClient
import HaulCore
import NIOCore
import NIOHTTP1

/// Feeds async-http-client's response of one request to a ``ResponseSink``. AHC calls it on the request's event
/// loop.
final class ResponseSinkDelegate<Sink: ResponseSink>: HTTPClientResponseDelegate {
    typealias Response = Sink.Response

    let sink: Sink

    init(_ sink: Sink) {
        self.sink = sink
    }

    func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
        sink.sent(part.readableBytes)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let headers = head.headers.map { ($0.name, $0.value) }
        return task.eventLoop.makeCompletedFuture(sink.head(status: Int(head.status.code), headers: headers).mapError { $0 })
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        task.eventLoop.makeCompletedFuture(sink.body(buffer).mapError { $0 })
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
        sink.abandon()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try sink.finish()
    }
}
