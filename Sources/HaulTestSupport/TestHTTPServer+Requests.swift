import Foundation

/// What a test asks of the running server, with curl: its statistics, their reset, a digest, a body.
extension TestHTTPServer {
    /// curl's options to trust this server.
    private var curlTrust: [String] { tls.map { ["--cacert", $0.authority.path] } ?? [] }

    /// The server's statistics, keyed by the request target exactly as the client sent it (`/gen/10?seed=1`).
    ///
    /// Every body byte a client has received is counted: the server waits for in-flight writes before answering.
    package func stats() async throws -> ServerStats {
        let body = try await get("/stats")
        do {
            return try JSONDecoder().decode(ServerStats.self, from: Data(body.utf8))
        } catch {
            throw TestSupportError("cannot decode /stats (\(error)): \(body)")
        }
    }

    /// Polls `/stats` until `condition` holds (for what the server learns late, such as a client that gave
    /// up during a stall: outcome `client-closed`). Returns the last statistics either way.
    package func stats(
        timeout: Duration = .seconds(5), until condition: (ServerStats) -> Bool
    ) async throws -> ServerStats {
        var stats = try await stats()
        do {
            try await waitUntil("the server's statistics", timeout: timeout, every: .milliseconds(25)) {
                if condition(stats) { return true }
                stats = try await self.stats()
                return condition(stats)
            }
        } catch is WaitTimeout {}
        return stats
    }

    /// Clears the statistics and the fault counters (`fail-times`, `reset-times`, … start over).
    package func resetStats() async throws {
        let result = try await Command.run(
            "curl",
            ["-s", "-S", "--noproxy", "*", "--max-time", "10", "-X", "POST", "-o", "/dev/null", "-w", "%{http_code}"]
                + curlTrust + [url("/stats/reset")]
        )
        guard result.status == 0, result.stdout == "204" else {
            throw TestSupportError("POST /stats/reset failed: curl \(result.status) \(result.stdout) \(result.stderr)")
        }
    }

    /// The lower-case hex SHA-256 of what `GET pathAndQuery` serves in full (`/gen/…`, `/files/…`, `/uploads/…`),
    /// asked of the server (`/sha256` + path; fault parameters in the query are applied to that request too).
    package func sha256(_ pathAndQuery: String) async throws -> String {
        let path = ServerStats.target(pathAndQuery)
        return try await get("/sha256" + (path.hasPrefix("/") ? path : "/" + path))
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The body of `GET pathAndQuery` as text; throws unless the answer is 2xx.
    package func get(_ pathAndQuery: String) async throws -> String {
        let result = try await Command.run(
            "curl",
            ["-s", "-S", "--noproxy", "*", "--fail", "--max-time", "30"] + curlTrust
                + [url(ServerStats.target(pathAndQuery))]
        )
        guard result.status == 0 else {
            throw TestSupportError("GET \(pathAndQuery) failed: curl \(result.status) \(result.stderr)")
        }
        return result.stdout
    }
}
