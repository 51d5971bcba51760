import Foundation

/// What `GET /stats` answered. Keys are request targets exactly as sent (`/gen/10?seed=1&reset-after=5`);
/// every lookup also accepts a full URL (`server.url(…)`), whose scheme and host are dropped.
package struct ServerStats: Sendable, Decodable {
    /// One request, in arrival order.
    package struct Request: Sendable, Decodable, Equatable {
        package let method: String
        /// Numbers the server's TCP connections from 1: equal numbers mean a reused (keep-alive) connection.
        package let connection: Int
        package let range: String?
        package let ifRange: String?
        /// The `Authorization` and `Cookie` headers received.
        package let authorization: String?
        package let cookie: String?
        /// The status answered (nil for an upload reset before its answer).
        package let status: Int?
        /// Content bytes written to the socket for this request.
        package let bytesSent: Int
        /// `pending`, `complete`, `reset`, `closed` (close-after), `stalling`, `client-closed`.
        package let outcome: String

        enum CodingKeys: String, CodingKey {
            case method, connection, range, status, outcome, authorization, cookie
            case ifRange = "if_range"
            case bytesSent = "bytes_sent"
        }
    }

    /// One `PUT`/`POST /upload/<name>`.
    package struct Upload: Sendable, Decodable, Equatable {
        package let method: String
        package let name: String
        /// Body bytes received (so far, for a reset upload).
        package let bytes: Int
        package let sha256: String?
        package let chunked: Bool
        package let status: Int?
        package let outcome: String
    }

    /// Everything about one request target.
    package struct Entry: Sendable, Decodable {
        /// Requests of any method.
        package let requests: Int
        package let methods: [String: Int]
        /// The `Range` headers received, in order (requests without one are left out).
        package let ranges: [String]
        /// Content bytes (of 2xx bodies of `/gen`, `/files`, `/uploads`) written to sockets, over all requests.
        package let bytesSent: Int
        package let log: [Request]
        package let uploads: [Upload]

        enum CodingKeys: String, CodingKey {
            case requests, methods, ranges, log, uploads
            case bytesSent = "bytes_sent"
        }
    }

    /// One `CONNECT` (the server acting as a forward proxy).
    package struct Tunnel: Sendable, Decodable, Equatable {
        /// `host:port` as asked.
        package let target: String
        package let proxyAuthorization: String?
        package let status: Int

        enum CodingKeys: String, CodingKey {
            case target, status
            case proxyAuthorization = "proxy_authorization"
        }
    }

    /// One absolute-form request (the server acting as a forward proxy for plain http).
    package struct Forwarded: Sendable, Decodable, Equatable {
        package let method: String
        /// The absolute URL as asked.
        package let target: String
        package let proxyAuthorization: String?
        package let authorization: String?
        /// 0 when passed on (the server's answer is in its own statistics), else the proxy's refusal.
        package let status: Int

        enum CodingKeys: String, CodingKey {
            case method, target, status, authorization
            case proxyAuthorization = "proxy_authorization"
        }
    }

    /// Every request target seen, as sent by the client.
    package let paths: [String: Entry]
    /// Every tunnel asked for, in order.
    package let tunnels: [Tunnel]
    /// Every absolute-form request, in order.
    package let forwarded: [Forwarded]
    /// The most requests the server was serving at one moment (from the request to the end of its answer).
    package let mostInFlight: Int

    enum CodingKeys: String, CodingKey {
        case paths, tunnels, forwarded
        case mostInFlight = "most_in_flight"
    }

    package subscript(_ key: String) -> Entry? { paths[Self.target(key)] }

    package func requests(_ key: String) -> Int { self[key]?.requests ?? 0 }
    package func requests(_ key: String, method: String) -> Int { self[key]?.methods[method] ?? 0 }
    package func bytesSent(_ key: String) -> Int { self[key]?.bytesSent ?? 0 }
    package func ranges(_ key: String) -> [String] { self[key]?.ranges ?? [] }
    package func log(_ key: String) -> [Request] { self[key]?.log ?? [] }
    package func uploads(_ key: String) -> [Upload] { self[key]?.uploads ?? [] }
    /// Content bytes sent for every target together.
    package var totalBytesSent: Int { paths.values.reduce(0) { $0 + $1.bytesSent } }

    /// Requests that reached `key` (all of them, in order).
    package func authorizations(_ key: String) -> [String?] { log(key).map(\.authorization) }

    /// `http://127.0.0.1:1234/a?b` → `/a?b`; `a?b` → `/a?b`; a target is returned as it is.
    static func target(_ key: String) -> String {
        guard let scheme = key.range(of: "://") else { return key.hasPrefix("/") ? key : "/" + key }
        let rest = key[scheme.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = String(rest[slash...])
        return target.hasPrefix("/") ? target : "/" + target
    }
}
