import AsyncHTTPClient
import FoundationEssentials
import Glibc
import HaulCore
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Plain http through an HTTP proxy, as curl sends it: one absolute-form request (`GET http://host/path HTTP/1.1`)
/// on a connection to the proxy.
///
/// async-http-client tunnels every proxied request with `CONNECT`, which a stock squid refuses for port 80 (its
/// rules allow CONNECT only to TLS ports), and has no option for anything else. This is the one place where hauld
/// speaks HTTP without it, kept to the least: SwiftNIO's HTTP/1 codec parses and frames everything; this file only
/// connects, writes one request, feeds the response to the same ``ResponseSink`` as async-http-client would, and
/// closes. https through a proxy still goes through async-http-client's tunnel.
struct ForwardProxy {
    let proxy: ProxyServer
    let connectTimeout: Duration
    let readTimeout: Duration

    /// Sends `method url` through the proxy, with `body` streamed from disk, and returns what `sink` made of the
    /// response; `rate` paces the body that goes one way. The connection runs on `loop` if one is given (as
    /// ``TransferClient`` pins it), else on any. Cancelling the calling task closes the connection at once.
    func exchange<Sink: ResponseSink>(
        method: HTTPMethod, url: URL, headers: [(String, String)], body: UploadSource?, sink: Sink, rate: RateMeter?,
        on loop: (any EventLoop)?
    ) async throws -> Sink.Response {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: Self.absoluteForm(url))
        head.headers = HTTPHeaders(headers)
        head.headers.replaceOrAdd(name: "Host", value: Self.hostHeader(url))
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        if let body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.size)) }
        addProxyAuthorization(to: &head.headers)
        let (channel, ended) = try await connect(sink, rate: body == nil ? rate : nil, on: loop)
        return try await withTaskCancellationHandler {
            defer { channel.close(promise: nil) }
            try Task.checkCancellation()
            try await channel.writeAndFlush(HTTPClientRequestPart.head(head))
            if let body { try await send(body, on: channel, sink: sink, rate: rate) }
            try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
            try await ended.get()
            return try sink.finish()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// What the proxy answers to `CONNECT authority`: asked only after async-http-client's tunnel was refused, so
    /// that the task's message can say what the proxy said.
    func connectStatus(authority: String) async throws -> HTTPResponseStatus {
        var head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: authority)
        head.headers.add(name: "Host", value: authority)
        addProxyAuthorization(to: &head.headers)
        let status = StatusSink()
        let (channel, ended) = try await connect(status, rate: nil, on: nil)
        defer { channel.close(promise: nil) }
        try await channel.writeAndFlush(HTTPClientRequestPart.head(head))
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        _ = try? await ended.get()
        guard let answer = status.status else { throw HTTPClientError.invalidProxyResponse }
        return answer
    }

    private func connect<Sink: ResponseSink>(
        _ sink: Sink, rate: RateMeter?, on loop: (any EventLoop)?
    ) async throws -> (any Channel, EventLoopFuture<Void>) {
        let loop = loop ?? MultiThreadedEventLoopGroup.singleton.next()
        let ended = loop.makePromise(of: Void.self)
        let readTimeout = TimeAmount(readTimeout)
        // Under a limit, a socket buffer sized to it: the kernel's own would grow with the large reads a grant
        // allows and take a whole response in ahead of the limit, which the proxy's close then hands over at once
        // (a channel drains its socket at the end of the stream whether or not a read was asked for).
        var bootstrap = ClientBootstrap(group: loop).connectTimeout(TimeAmount(connectTimeout))
        if let bytes = rate?.receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(bytes))
        }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandlers([
                        IdleStateHandler(readTimeout: readTimeout), SinkHandler(sink: sink, ended: ended, rate: rate),
                    ])
                }
            }
            .connect(host: proxy.host, port: proxy.port).get()
        return (channel, ended.futureResult)
    }

    private func send(
        _ body: UploadSource, on channel: any Channel, sink: some ResponseSink, rate: RateMeter?
    ) async throws {
        let fd = open(body.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TransferFailure.fromErrno(errno, path: body.path) }
        defer { close(fd) }
        // Each chunk is read once the previous one is on its way (the socket's pace, as for async-http-client) and the
        // rate limit allows.
        while true {
            let maxBytes = try await rate?.allowance(on: channel.eventLoop).get()
            guard let chunk = try UploadSource.readChunk(fd: fd, path: body.path, maxBytes: maxBytes).get() else { break }
            rate?.consumed(chunk.readableBytes)
            try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(chunk)))
            sink.sent(chunk.readableBytes)
        }
    }

    private func addProxyAuthorization(to headers: inout HTTPHeaders) {
        guard let user = proxy.username else { return }
        let credentials = Data("\(user):\(proxy.password ?? "")".utf8).base64EncodedString()
        headers.replaceOrAdd(name: "Proxy-Authorization", value: "Basic \(credentials)")
    }

    /// `url` as a request target for a proxy: absolute, without userinfo or fragment.
    static func absoluteForm(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        components.fragment = nil
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        return components.string ?? url.absoluteString
    }

    /// The `Host` header for `url`: its host, with its port when one is given.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host(percentEncoded: true) ?? ""
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return url.port.map { "\(shown):\($0)" } ?? shown
    }
}

/// Passes one HTTP response to a ``ResponseSink`` and completes `ended` when it is over. Under a rate limit, the
/// channel's next read waits until the ``RateMeter`` allows it; while the sink finishes with the head
/// (``ResponseSink/headWork()``), what arrives is held back and no more is read.
private final class SinkHandler<Sink: ResponseSink>: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart

    private let sink: Sink
    private let ended: EventLoopPromise<Void>
    private let rate: RateMeter?
    private var isOver = false
    /// The parts that came while the head's work ran, nil when none runs.
    private var held: [HTTPClientResponsePart]?
    /// What the channel asked for while the head's work ran: a read, its end.
    private var readWaiting = false
    private var inactiveWhileHeld = false

    init(sink: Sink, ended: EventLoopPromise<Void>, rate: RateMeter?) {
        self.sink = sink
        self.ended = ended
        self.rate = rate
    }

    func read(context: ChannelHandlerContext) {
        if held != nil, !isOver {
            readWaiting = true
            return
        }
        guard let rate, !isOver else { return context.read() }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        rate.ready(on: context.eventLoop).whenSuccess { bound.value.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isOver else { return }
        let part = unwrapInboundIn(data)
        if held != nil {
            held?.append(part)
            return
        }
        receive(part, context)
    }

    private func receive(_ part: HTTPClientResponsePart, _ context: ChannelHandlerContext) {
        let result: Result<Void, TransferFailure>
        switch part {
        case .head(let head):
            // An interim answer (100 Continue) is not the response.
            if (100..<200).contains(head.status.code) { return }
            result = sink.head(status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) })
            if case .success = result, let work = sink.headWork() {
                held = []
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.makeFutureWithTask { await work() }.whenSuccess { result in
                    bound.value.0.release(result, bound.value.1)
                }
                return
            }
        case .body(let buffer):
            result = sink.body(buffer)
            if case .success = result { rate?.consumed(buffer.readableBytes) }
        case .end:
            end(context, .success(()))
            return
        }
        if case .failure(let failure) = result { end(context, .failure(failure)) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case IdleStateHandler.IdleStateEvent.read = event {
            end(context, .failure(HTTPClientError.readTimeout))
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(context, .failure(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The response may be whole among the parts held: they go first.
        if held != nil {
            inactiveWhileHeld = true
        } else {
            end(context, .failure(HTTPClientError.remoteConnectionClosed))
        }
        context.fireChannelInactive()
    }

    /// The head's work is done: the parts held back go to the sink, unless it failed.
    private func release(_ result: Result<Void, TransferFailure>, _ context: ChannelHandlerContext) {
        let parts = held ?? []
        held = nil
        if case .failure(let failure) = result { return end(context, .failure(failure)) }
        for part in parts where !isOver { receive(part, context) }
        if inactiveWhileHeld { end(context, .failure(HTTPClientError.remoteConnectionClosed)) }
        if readWaiting, !isOver {
            readWaiting = false
            read(context: context)
        }
    }

    private func end(_ context: ChannelHandlerContext, _ result: Result<Void, any Error>) {
        guard !isOver else { return }
        isOver = true
        if case .failure = result { sink.abandon() }
        ended.completeWith(result)
        context.close(promise: nil)
    }
}

/// Keeps the status line of a proxy's answer to `CONNECT`.
private final class StatusSink: ResponseSink {
    private let answer = Mutex<HTTPResponseStatus?>(nil)

    var status: HTTPResponseStatus? { answer.withLock { $0 } }

    func head(status: Int, headers: [(String, String)]) -> Result<Void, TransferFailure> {
        answer.withLock { $0 = HTTPResponseStatus(statusCode: status) }
        // Nothing more is wanted: this ends the exchange.
        return .failure(.cancelled)
    }

    func body(_ buffer: ByteBuffer) -> Result<Void, TransferFailure> { .success(()) }
    func abandon() {}
    func finish() throws(TransferFailure) {}
}
