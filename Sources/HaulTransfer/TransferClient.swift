import AsyncHTTPClient
package import FoundationEssentials
package import HaulCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The HTTP side of transfers: the daemon's `HTTPClient`s and single attempts of downloads and uploads.
///
/// async-http-client takes its proxy per client, so there is one client per route in use (direct, or through one
/// proxy of ``ProxySettings``), each made on first use. Plain http through an HTTP proxy goes through
/// ``ForwardProxy`` instead, as an absolute-form request.
///
/// An attempt is one request and the redirects it is answered with, each checked before it is followed; retries,
/// resuming and the task's lifecycle are decided by the caller (the pure `TransferTaskStateMachine`). Cancelling the
/// calling Swift task stops an attempt at once: nothing more is written to disk and the connection is closed.
package final class TransferClient: Sendable {
    package struct Configuration: Sendable {
        /// The longest a response may stay silent before the attempt fails as a stall (retried).
        package var readTimeout: Duration = .seconds(30)
        package var connectTimeout: Duration = .seconds(15)
        /// Connections per host; there is no global limit. Room for one task's 16 segments and a few others.
        package var connectionsPerHost = 20
        /// Proxies, usually from the environment; none by default.
        package var proxies = ProxySettings.none
        /// The CA certificates https trusts, usually the system's (``TrustStore/resolve(environment:isFile:isDirectory:)``).
        package var trust = TrustStore.resolve(environment: [:])

        package init() {}
    }

    /// What a client's pooled connections are kept for: one proxy's route (nil: direct), and transfers a limit
    /// applies to or not.
    ///
    /// A limited transfer never takes a connection an unlimited one left in the pool. An unlimited download grows its
    /// connection's receive window to many megabytes (Linux's `tcp_rmem` allows 32 MiB); a limited one reading that
    /// connection at its pace let the server push its data ahead of the limit, 20 MB in half a second, before the
    /// window's back-pressure reached it, and then sent nothing for ten seconds while hauld read what the kernel held.
    private struct Route: Hashable {
        var proxy: ProxyServer?
        var limited: Bool
    }

    private struct Clients: ~Copyable {
        var byRoute: [Route: HTTPClient] = [:]
        var isShutDown = false
    }

    private let configuration: Configuration
    private let baseConfiguration: HTTPClient.Configuration
    private let clients = Mutex(Clients())

    package init(configuration: Configuration = .init()) {
        self.configuration = configuration
        var config = HTTPClient.Configuration(
            tlsConfiguration: Self.tlsConfiguration(configuration.trust),
            // Followed here instead, hop by hop (`Redirect`).
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: .init(configuration.connectTimeout), read: .init(configuration.readTimeout)
            )
        )
        config.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.connectionsPerHost
        )
        // One attempt is one attempt: a refused connection, a failed handshake or a proxy's refusal ends it at once,
        // and the task's own back-off decides what comes next (AHC would keep reconnecting until the connect timeout).
        config.connectionPool.retryConnectionEstablishment = false
        config.decompression = .disabled
        baseConfiguration = config
    }

    private static func tlsConfiguration(_ trust: TrustStore) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        // NIOSSL takes one file or directory as its roots; a bundle beside a directory is added to them.
        switch (trust.bundle, trust.directories.first) {
        case (let bundle?, let directory?):
            tls.trustRoots = .file(directory)
            tls.additionalTrustRoots = [.file(bundle)]
        case (let bundle?, nil):
            tls.trustRoots = .file(bundle)
        case (nil, let directory?):
            tls.trustRoots = .file(directory)
        case (nil, nil):
            tls.trustRoots = .certificates([])
        }
        tls.additionalTrustRoots += trust.directories.dropFirst().flatMap(Self.certificates(in:)).map {
            .certificates($0)
        }
        return tls
    }

    /// The PEM certificates of a second or later `SSL_CERT_DIR` entry (NIOSSL looks up only one directory).
    private static func certificates(in directory: String) -> [[NIOSSLCertificate]] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { try? NIOSSLCertificate.fromPEMFile(directory + "/" + $0) }
    }

    /// Shuts every client down; attempts started afterwards fail as cancelled.
    package func shutdown() async {
        let all = clients.withLock { clients in
            clients.isShutDown = true
            defer { clients.byRoute = [:] }
            return Array(clients.byRoute.values)
        }
        for client in all { try? await client.shutdown() }
    }

    /// GETs `url` into `partialPath`, resuming from `offset` (the partial file's size) when `validator` allows. A
    /// download into a folder has no `partialPath` yet: `naming` names its file from the first response's
    /// `Content-Disposition` and URL (the last hop's), and returns its path, before any byte is written.
    package func download(
        url: URL, partialPath: String?, offset: Int64, validator: ResumeValidator?, headers: [String: String],
        naming: (@Sendable (_ contentDisposition: String?, _ finalURL: URL) async -> Result<String, TransferFailure>)? =
            nil,
        rate: RateMeter? = nil, onHead: @escaping @Sendable (DownloadHead) -> Void,
        onProgress: @escaping @Sendable (UInt64) -> Void
    ) async throws(TransferFailure) -> DownloadOutcome {
        var hop = try Self.validated(url)
        for _ in 0...Redirect.maximumHops {
            let finalURL = hop
            let writerNaming: DownloadWriter.Naming? = naming.map { naming in
                { @Sendable headers in
                    await naming(HTTPResume.headerValue("Content-Disposition", in: headers), finalURL)
                }
            }
            let writer = DownloadWriter(
                partialPath: partialPath, naming: writerNaming, requestedOffset: offset, onHead: onHead,
                onProgress: onProgress
            )
            let requestHeaders = RequestHeaders.forRequest(to: hop, origin: url, clientHeaders: headers)
                + HTTPResume.rangeRequestHeaders(offset: offset, validator: validator)
            let response = try await exchange(.GET, hop, headers: requestHeaders, body: nil, sink: writer, rate: rate) {
                writer.stop()
            }
            switch response {
            case .finished(let bytesOnDisk):
                try await writer.syncToDisk()
                return DownloadOutcome(bytesOnDisk: bytesOnDisk)
            case .redirect(let status, let location):
                hop = try Redirect.target(status: status, location: location, from: hop).url
            }
        }
        throw Self.tooManyRedirects
    }

    /// GETs `url` into `partialPath` over up to `connections` connections, continuing `plan` (made under
    /// `validator`) or starting from zero when there is none.
    package func download(
        url: URL, partialPath: String, connections: Int, plan: SegmentPlan?, validator: ResumeValidator?,
        headers: [String: String], rate: RateMeter? = nil, onHead: @escaping @Sendable (DownloadHead) -> Void,
        onProgress: @escaping @Sendable (UInt64) -> Void, onPlan: @escaping @Sendable (SegmentPlan) -> Void
    ) async throws(TransferFailure) -> DownloadOutcome {
        let origin = try Self.validated(url)
        // Every connection of the download on one event loop (the rate limiter's, under a limit; not through a
        // proxy's tunnel, see `exchange`): the limiter's timer then wakes one loop, not both, and the connections'
        // reads of one grant follow each other there.
        let loop = rate?.loop ?? MultiThreadedEventLoopGroup.singleton.next()
        let download = SegmentedDownload(
            url: origin, partialPath: partialPath, connections: connections,
            writebackChunk: rate?.segmentWritebackChunk ?? Writeback.chunk,
            observer: .init(head: onHead, progress: onProgress, plan: onPlan),
            exchange: { [self] url, range, writer throws(TransferFailure) in
                var hop = url
                for _ in 0...Redirect.maximumHops {
                    let requestHeaders = RequestHeaders.forRequest(to: hop, origin: url, clientHeaders: headers) + range
                    let response = try await exchange(
                        .GET, hop, headers: requestHeaders, body: nil, sink: writer, rate: rate, sharing: loop
                    ) { writer.stop() }
                    guard case .redirect(let status, let location) = response else { return response }
                    writer.clearRedirect()
                    hop = try Redirect.target(status: status, location: location, from: hop).url
                }
                throw Self.tooManyRedirects
            }
        )
        return try await download.run(plan: plan, validator: validator)
    }

    /// Whether `failure` ended a segmented download because the file changed under it, or its server gave no size
    /// with its ranges: the download must start again from zero, on one connection.
    package static func needsOneConnection(_ failure: TransferFailure) -> Bool {
        failure == SegmentedDownload.changed || failure == SegmentedDownload.unsized
    }

    /// Sends the file at `path` with PUT or POST, streamed from disk; redirects other than 303 get the body again.
    package func upload(
        url: URL, path: String, method: UploadOptions.Method, headers: [String: String], rate: RateMeter? = nil,
        onProgress: @escaping @Sendable (UInt64, Int64) -> Void
    ) async throws(TransferFailure) -> Int {
        let source = try UploadSource(path: path)
        var hop = try Self.validated(url)
        for _ in 0...Redirect.maximumHops {
            let answer = UploadAnswer(total: source.size, onProgress: onProgress)
            let requestHeaders = RequestHeaders.forRequest(to: hop, origin: url, clientHeaders: headers)
            switch try await exchange(
                method == .post ? .POST : .PUT, hop, headers: requestHeaders, body: source, sink: answer, rate: rate,
                stop: {}
            ) {
            case .finished(let status): return status
            case .redirect(let status, let location):
                hop = try Redirect.target(status: status, location: location, from: hop).url
            }
        }
        throw Self.tooManyRedirects
    }

    private static let tooManyRedirects = TransferFailure(
        kind: .network, message: "too many redirects (more than \(Redirect.maximumHops))", isTransient: false
    )

    private static func validated(_ url: URL) throws(TransferFailure) -> URL {
        do {
            return try TransferURL(url.absoluteString).url
        } catch {
            throw TransferFailure(kind: .invalidArgument, message: error.description, isTransient: false)
        }
    }

    /// One request to `url` on the route its proxy settings give, its response fed to `sink`; `rate` paces the body
    /// that goes one way (an upload's request, a download's response). `shared` is the event loop the request's
    /// connection shares with others (a segmented download's).
    ///
    /// The connection and the delegate are pinned to one loop: `shared`, else the rate limiter's under a limit, else
    /// none (async-http-client chooses). Pinned, the delegate runs on the connection's own loop; with `.indifferent`,
    /// async-http-client may hand the request a pooled connection on another loop than the delegate's, and every
    /// body part then crosses between the two threads and back: a download held to 5 MiB/s woke hauld 65 times a
    /// second instead of 20. Never through a proxy's tunnel: async-http-client then opens a second tunnel for the
    /// request.
    private func exchange<Sink: ResponseSink>(
        _ method: HTTPMethod, _ url: URL, headers: [(String, String)], body: UploadSource?, sink: Sink,
        rate: RateMeter?, sharing shared: (any EventLoop)? = nil, stop: @escaping @Sendable () -> Void
    ) async throws(TransferFailure) -> Sink.Response {
        let proxy: ProxyServer?
        switch configuration.proxies.route(for: url) {
        case .direct: proxy = nil
        case .proxy(let server): proxy = server
        case .unusable(let error):
            throw TransferFailure(kind: .network, message: error.description, isTransient: false)
        }
        let describe = describer(url, proxy)
        let wire = RequestHeaders.withoutUserinfo(url)
        let pinned = shared ?? rate?.loop
        do {
            if let proxy, proxy.kind == .http, url.scheme?.lowercased() == "http" {
                let forward = ForwardProxy(
                    proxy: proxy, connectTimeout: configuration.connectTimeout, readTimeout: configuration.readTimeout
                )
                return try await Self.stopping(stop) {
                    try await forward.exchange(
                        method: method, url: wire, headers: headers, body: body, sink: sink, rate: rate, on: pinned
                    )
                }
            }
            let client = try client(for: Route(proxy: proxy, limited: rate?.isLimited ?? false))
            var request = try HTTPClient.Request(url: wire, method: method, headers: HTTPHeaders(headers))
            request.body = body?.body(rate: rate)
            let delegate = ResponseSinkDelegate(sink, rate: body == nil ? rate : nil)
            let preference: HTTPClient.EventLoopPreference =
                if proxy == nil, let pinned { .delegateAndChannel(on: pinned) } else { .indifferent }
            let task = client.execute(request: request, delegate: delegate, eventLoop: preference)
            return try await Self.stopping({ stop(); task.cancel() }) { try await task.futureResult.get() }
        } catch let error as HTTPClientError where error == .invalidProxyResponse {
            throw await tunnelRefusal(url, proxy: proxy, describe: describe)
        } catch {
            throw Task.isCancelled ? .cancelled : describe.failure(for: error)
        }
    }

    /// Runs `body`, calling `stop` as soon as the calling task is cancelled.
    private static func stopping<Result: Sendable>(
        _ stop: @escaping @Sendable () -> Void, _ body: () async throws -> Result
    ) async throws -> Result {
        try await withTaskCancellationHandler { try await body() } onCancel: { stop() }
    }

    /// A proxy refused async-http-client's `CONNECT`: ask it once more, to say what it answered. A 4xx will not
    /// change by trying again; anything else (a 502 when it cannot reach the server) may.
    private func tunnelRefusal(_ url: URL, proxy: ProxyServer?, describe: FailureDescription) async -> TransferFailure {
        guard let proxy else { return .network("\(describe.server) answered like a proxy refusing a tunnel") }
        let forward = ForwardProxy(
            proxy: proxy, connectTimeout: configuration.connectTimeout, readTimeout: configuration.readTimeout
        )
        guard let status = try? await forward.connectStatus(authority: describe.server) else {
            return .network("\(describe.peer) refused to open a tunnel to \(describe.server)")
        }
        return TransferFailure(
            kind: .network,
            message: "\(describe.peer) refused to open a tunnel to \(describe.server): it answered "
                + "\(status.code) \(status.reasonPhrase)",
            httpStatus: UInt32(status.code),
            isTransient: !(400..<500).contains(status.code)
        )
    }

    private func describer(_ url: URL, _ proxy: ProxyServer?) -> FailureDescription {
        let server = Self.authority(host: url.host() ?? "", port: url.port ?? (url.scheme == "https" ? 443 : 80))
        let proxyAuthority = proxy.map { Self.authority(host: $0.host, port: $0.port) }
        return FailureDescription(
            peer: proxyAuthority.map { "the proxy \($0)" } ?? server, server: server, proxy: proxyAuthority,
            readTimeout: configuration.readTimeout, connectTimeout: configuration.connectTimeout,
            trust: configuration.trust
        )
    }

    private static func authority(host: String, port: Int) -> String {
        (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + ":\(port)"
    }

    /// The client for `route`, made on first use.
    private func client(for route: Route) throws(TransferFailure) -> HTTPClient {
        let client: HTTPClient? = clients.withLock { clients in
            guard !clients.isShutDown else { return nil }
            if let client = clients.byRoute[route] { return client }
            var configuration = baseConfiguration
            configuration.proxy = route.proxy.map(Self.clientProxy)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients.byRoute[route] = client
            return client
        }
        guard let client else { throw .cancelled }
        return client
    }

    private static func clientProxy(_ server: ProxyServer) -> HTTPClient.Configuration.Proxy {
        switch server.kind {
        case .socks5:
            return .socksServer(host: server.host, port: server.port)
        case .http:
            let authorization = server.username.map {
                HTTPClient.Authorization.basic(username: $0, password: server.password ?? "")
            }
            return .server(host: server.host, port: server.port, authorization: authorization)
        }
    }
}
