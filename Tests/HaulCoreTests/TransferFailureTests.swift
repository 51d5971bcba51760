import Foundation
import HaulCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Transfer failures", .timeLimit(.minutes(2)))
struct TransferFailureTests {
    @Test func kindsAreSpelledAsTheContractsErrorNames() {
        let names = TransferErrorKind.allCases.map(\.rawValue)
        #expect(
            names == [
                "InvalidArgument", "NotFound", "FileExists", "PermissionDenied", "Network", "HTTP", "Cancelled",
                "ChecksumMismatch", "DiskFull", "Timeout",
            ]
        )
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func transientStatuses(_ status: Int) {
        let failure = TransferFailure.http(status: status)
        #expect(failure.isTransient)
        #expect(failure.kind == .http)
        #expect(failure.httpStatus == UInt32(status))
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416, 451, 301, 304, 600, 100])
    func permanentStatuses(_ status: Int) {
        #expect(!TransferFailure.http(status: status).isTransient)
    }

    @Test func httpMessagesReadAsServersPrintThem() {
        #expect(TransferFailure.http(status: 404).message == "HTTP 404 Not Found")
        #expect(TransferFailure.http(status: 503).message == "HTTP 503 Service Unavailable")
        #expect(TransferFailure.http(status: 599).message == "HTTP 599")
        #expect(TransferFailure.http(status: 404).description == "HTTP: HTTP 404 Not Found")
        #expect(TransferFailure.http(status: -1).httpStatus == nil)
        #expect(TransferFailure.http(status: 429, retryAfter: .seconds(9)).retryAfter == .seconds(9))
    }

    @Test func helpersClassify() {
        #expect(TransferFailure.network("reset").isTransient)
        #expect(TransferFailure.timeout("stalled").isTransient)
        #expect(TransferFailure.timeout("stalled").kind == .timeout)
        let permanent: [(TransferFailure, TransferErrorKind)] = [
            (.cancelled, .cancelled), (.checksumMismatch(expected: "a", actual: "b"), .checksumMismatch),
            (.diskFull("/f"), .diskFull), (.permissionDenied("/f"), .permissionDenied),
            (.fileExists("/f"), .fileExists), (.notFound("/f"), .notFound),
        ]
        for (failure, kind) in permanent {
            #expect(failure.kind == kind)
            #expect(!failure.isTransient, "\(failure)")
            #expect(failure.httpStatus == nil)
        }
        #expect(TransferFailure.checksumMismatch(expected: "aa", actual: "bb").message.contains("expected aa, got bb"))
        #expect(TransferFailure.diskFull("/data/f").message.contains("/data/f"))
    }

    @Test func errnoMapping() {
        let cases: [(Int32, TransferErrorKind)] = [
            (ENOSPC, .diskFull), (EDQUOT, .diskFull), (EACCES, .permissionDenied), (EPERM, .permissionDenied),
            (EROFS, .permissionDenied), (EEXIST, .fileExists), (ENOENT, .notFound), (ENOTDIR, .notFound),
            (EIO, .network), (EISDIR, .network),
        ]
        for (code, kind) in cases {
            let failure = TransferFailure.fromErrno(code, path: "/x/f")
            #expect(failure.kind == kind, "errno \(code)")
            #expect(!failure.isTransient)
            #expect(failure.message.contains("/x/f"))
        }
        #expect(TransferFailure.fromErrno(EIO, path: "/x/f").message.hasPrefix("I/O error on /x/f: "))
    }

    @Test func codableRoundTripWithRetryAfterInSeconds() throws {
        let failure = TransferFailure.http(status: 503, retryAfter: .milliseconds(1500))
        let data = try JSONEncoder().encode(failure)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["retryAfter"] as? Double == 1.5)
        #expect(try JSONDecoder().decode(TransferFailure.self, from: data) == failure)
        let plain = TransferFailure.cancelled
        #expect(try JSONDecoder().decode(TransferFailure.self, from: JSONEncoder().encode(plain)) == plain)
    }

    @Test func absurdRetryAfterIsClampedWhenStoredAndRejectedWhenRead() throws {
        let failure = TransferFailure.http(status: 503, retryAfter: .seconds(Int64.max))
        let decoded = try JSONDecoder().decode(TransferFailure.self, from: JSONEncoder().encode(failure))
        #expect(decoded.retryAfter == .seconds(1_000_000_000))
        for bad in ["-1", "1e10"] {
            let json = #"{"kind":"HTTP","message":"m","isTransient":true,"retryAfter":"# + bad + "}"
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(TransferFailure.self, from: Data(json.utf8))
            }
        }
    }

    @Test func outcomesExposeTheirFailure() {
        #expect(TransferOutcome.success.failure == nil)
        #expect(TransferOutcome.failure(.cancelled).failure == .cancelled)
        #expect(TaskCommandError.taskCompleted.description == "the task has completed")
    }
}
