import AsyncHTTPClient
public import FoundationEssentials
public import HaulCore
import NIOCore
import NIOHTTP1
import Synchronization

/// The HTTP side of transfers: the daemon's `HTTPClient`s and single attempts of downloads and uploads.
///
/// async-http-client takes its proxy per client, so there is one client per route in use (direct, or through one
/// proxy of ``ProxySettings``), each made on first use.
///
/// An attempt is one request; retries, resuming and the task's lifecycle are decided by the caller (the pure
/// `TransferTaskStateMachine`). Cancelling the calling Swift task stops an attempt at once: nothing more is
/// written to disk and the connection is closed.
public final class TransferClient: Sendable {
    public struct Configuration: Sendable {
        /// The longest a response may stay silent before the attempt fails as a stall (retried).
        public var readTimeout: Duration = .seconds(30)
        public var connectTimeout: Duration = .seconds(15)
        /// Connections per host; there is no global limit.
        public var connectionsPerHost = 8
        public var maximumRedirects = 10
        /// Proxies, usually from the environment; none by default.
        public var proxies = ProxySettings.none

        public init() {}
    }

    private struct Clients: ~Copyable {
        var byProxy: [ProxyServer?: HTTPClient] = [:]
        var isShutDown = false
    }

    private let proxies: ProxySettings
    private let baseConfiguration: HTTPClient.Configuration
    private let clients = Mutex(Clients())

    public init(configuration: Configuration = .init()) {
        proxies = configuration.proxies
        var config = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: configuration.maximumRedirects, allowCycles: false),
            timeout: .init(
                connect: .init(configuration.connectTimeout), read: .init(configuration.readTimeout)
            )
        )
        config.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.connectionsPerHost
        )
        config.decompression = .disabled
        baseConfiguration = config
    }

    /// Shuts every client down; attempts started afterwards fail as cancelled.
    public func shutdown() async {
        let all = clients.withLock { clients in
            clients.isShutDown = true
            defer { clients.byProxy = [:] }
            return Array(clients.byProxy.values)
        }
        for client in all { try? await client.shutdown() }
    }

    /// The client for `url`'s route. A proxy variable that applies but cannot be used fails the transfer for good.
    private func client(for url: URL) throws(TransferFailure) -> HTTPClient {
        let proxy: ProxyServer?
        switch proxies.route(for: url) {
        case .direct: proxy = nil
        case .proxy(let server): proxy = server
        case .unusable(let error):
            throw TransferFailure(kind: .network, message: error.description, isTransient: false)
        }
        let client: HTTPClient? = clients.withLock { clients in
            guard !clients.isShutDown else { return nil }
            if let client = clients.byProxy[proxy] { return client }
            var configuration = baseConfiguration
            configuration.proxy = proxy.map(Self.clientProxy)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients.byProxy[proxy] = client
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

    /// GETs `url` into `partialPath`, resuming from `offset` (the partial file's size) when `validator` allows.
    public func download(
        url: URL, partialPath: String, offset: Int64, validator: ResumeValidator?, headers: [String: String],
        onHead: @escaping @Sendable (DownloadHead) -> Void, onProgress: @escaping @Sendable (UInt64) -> Void
    ) async throws(TransferFailure) -> DownloadOutcome {
        var requestHeaders = headers.map { ($0.key, $0.value) }
        requestHeaders += HTTPResume.rangeRequestHeaders(offset: offset, validator: validator)
        let request = try makeRequest(url: url, method: .GET, headers: requestHeaders)
        let httpClient = try client(for: url)
        let delegate = DownloadDelegate(
            partialPath: partialPath, requestedOffset: offset, onHead: onHead, onProgress: onProgress
        )
        return try await run(httpClient.execute(request: request, delegate: delegate), stop: { delegate.stop() })
    }

    /// Sends the file at `path` with PUT or POST, streamed from disk.
    public func upload(
        url: URL, path: String, method: UploadOptions.Method, headers: [String: String],
        onProgress: @escaping @Sendable (UInt64, Int64) -> Void
    ) async throws(TransferFailure) -> Int {
        let source = try UploadSource(path: path)
        var request = try makeRequest(
            url: url, method: method == .post ? .POST : .PUT, headers: headers.map { ($0.key, $0.value) }
        )
        request.body = source.body
        let httpClient = try client(for: url)
        let delegate = UploadDelegate(total: source.size, onProgress: onProgress)
        return try await run(httpClient.execute(request: request, delegate: delegate), stop: {})
    }

    private func makeRequest(url: URL, method: HTTPMethod, headers: [(String, String)]) throws(TransferFailure)
        -> HTTPClient.Request
    {
        do {
            return try HTTPClient.Request(url: url, method: method, headers: HTTPHeaders(headers))
        } catch {
            throw TransferFailure(kind: .invalidArgument, message: "cannot request \(url): \(error)", isTransient: false)
        }
    }

    private func run<Response: Sendable>(_ task: HTTPClient.Task<Response>, stop: @escaping @Sendable () -> Void)
        async throws(TransferFailure) -> Response
    {
        do {
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                stop()
                task.cancel()
            }
        } catch let failure as TransferFailure {
            throw failure
        } catch {
            throw Task.isCancelled ? .cancelled : TransferClient.failure(for: error)
        }
    }

    /// Sorts client errors into transient (retried) and permanent ones.
    static func failure(for error: any Error) -> TransferFailure {
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .connectTimeout, .deadlineExceeded:
                return .timeout("no data for too long (\(error))")
            case .cancelled:
                return .cancelled
            case .invalidURL, .emptyHost, .emptyScheme:
                return TransferFailure(kind: .invalidArgument, message: "\(error)", isTransient: false)
            case .redirectLimitReached, .redirectCycleDetected:
                return TransferFailure(kind: .network, message: "too many redirects", isTransient: false)
            default:
                return .network("\(error)")
            }
        }
        let description = String(describing: error)
        if description.contains("certificate") || description.contains("handshake") || description.contains("SSL") {
            return TransferFailure(kind: .network, message: "TLS failed: \(description)", isTransient: false)
        }
        return .network(description)
    }
}
