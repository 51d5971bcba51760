import Foundation
import HaulCore

/// A task record file exactly as hauld writes it, and the record it holds.
struct RecordGolden: Sendable, CustomStringConvertible {
    var description: String
    var json: String
    var record: TaskRecord
}

/// Files written by hauld as of 2026-11-24 (main at 27f833e): `haul get`, `put`, `suspend` and `cancel` against
/// `scripts/test-http-server`, and hauld killed twice in a row during a download for the crash-loop guard; the
/// last two as `TaskStore` encoded them then, pretty-printed with sorted keys. They must load as they are, and a record
/// saved today must give back the same keys and values (on one line since 2026-12-01): the format must not change by
/// accident, whatever the bus comes to call things.
enum RecordGoldens {
    static let all: [RecordGolden] = [
        completedDownload, failedDownload, suspendedWithPassword, suspendedWithWeakDate, cancelled, postUpload,
        segmented, crashLoopNotice, runningInterrupted, retryAfterFailure, cancelingSingleConnection,
    ]

    /// The validator `scripts/test-http-server` gives `/gen/<size>?seed=<seed>`.
    static func generated(_ size: Int, seed: Int, strong: Bool = true) -> ResumeValidator {
        ResumeValidator(
            etag: "\"gen-\(size)-\(seed)\"", lastModified: "Mon, 01 Jan 2001 00:00:0\(seed) GMT",
            lastModifiedIsStrong: strong
        )
    }

    static let completedDownload = RecordGolden(
        description: "a completed download with headers, a SHA-256 and a strong validator",
        json: completedDownloadJSON,
        record: TaskRecord(
            id: 1, kind: .download, url: "http://127.0.0.1:34601/gen/64k?seed=3", path: "/tmp/golden/work/done.bin",
            createdAt: Date(timeIntervalSinceReferenceDate: 817180185.1876813), state: .completed, outcome: .success,
            validator: generated(65536, seed: 3), expectedTotal: 65536, httpStatus: 200, resumable: true,
            headers: ["X-Trace": "1"], sha256: "dfdbdf226bd71c82015553cdf1f88574a33c1963a265cffbad96a281cd641726",
            overwrite: true
        )
    )

    static let failedDownload = RecordGolden(
        description: "a download that failed with HTTP 404",
        json: failedDownloadJSON,
        record: TaskRecord(
            id: 2, kind: .download, url: "http://127.0.0.1:34601/gen/1k?status=404",
            path: "/tmp/golden/work/missing.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180185.2557853),
            state: .completed, outcome: .failure(.http(status: 404)), httpStatus: 404
        )
    )

    static let suspendedWithPassword = RecordGolden(
        description: "a download created suspended, its URL with a password",
        json: suspendedWithPasswordJSON,
        record: TaskRecord(
            id: 3, kind: .download, url: "http://bob:pw@127.0.0.1:34601/gen/1m?seed=4",
            path: "/tmp/golden/work/later.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180185.3018595)
        )
    )

    static let suspendedWithWeakDate = RecordGolden(
        description: "a suspended download whose Last-Modified is a weak validator",
        json: suspendedWithWeakDateJSON,
        record: TaskRecord(
            id: 5, kind: .download, url: "http://127.0.0.1:34601/gen/2m?seed=6&throttle=500000&date=last-modified",
            path: "/tmp/golden/work/weak.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180187.0396258),
            validator: generated(2097152, seed: 6, strong: false), expectedTotal: 2097152, httpStatus: 200,
            resumable: true
        )
    )

    static let cancelled = RecordGolden(
        description: "a cancelled download",
        json: cancelledJSON,
        record: TaskRecord(
            id: 6, kind: .download, url: "http://127.0.0.1:34601/gen/2m?seed=7&throttle=100000",
            path: "/tmp/golden/work/cancelled.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180188.1235768),
            state: .completed, outcome: .failure(.cancelled), validator: generated(2097152, seed: 7),
            expectedTotal: 2097152, httpStatus: 200, resumable: true
        )
    )

    static let postUpload = RecordGolden(
        description: "a completed POST upload",
        json: postUploadJSON,
        record: TaskRecord(
            id: 7, kind: .upload, url: "http://127.0.0.1:34601/upload/up.bin", path: "/tmp/golden/work/up.bin",
            createdAt: Date(timeIntervalSinceReferenceDate: 817180188.7936947), state: .completed, outcome: .success,
            httpStatus: 200, headers: ["Content-Type": "application/octet-stream"], method: .post
        )
    )

    static let segmented = RecordGolden(
        description: "a download over four connections, suspended with its segment plan",
        json: segmentedJSON,
        record: TaskRecord(
            id: 1, kind: .download, url: "http://127.0.0.1:33569/gen/8m?seed=5&throttle=300000",
            path: "/tmp/golden/work2/seg.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180865.11473),
            validator: generated(8388608, seed: 5), expectedTotal: 8388608, httpStatus: 206, resumable: true,
            connections: 4,
            segments: SegmentPlan(
                saved: 8388608,
                segments: [
                    .init(start: 0, end: 2097152, done: 619824),
                    .init(start: 4194304, end: 6291456, done: 619824),
                    .init(start: 2097152, end: 4194304, done: 619824),
                    .init(start: 6291456, end: 8388608, done: 619824),
                ]
            )
        )
    )

    static let crashLoopNotice = RecordGolden(
        description: "a download the crash-loop guard suspended, with its notice",
        json: crashLoopNoticeJSON,
        record: TaskRecord(
            id: 2, kind: .download, url: "http://127.0.0.1:33569/gen/4m?seed=8&throttle=100000",
            path: "/tmp/golden/work2/crash.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180867.2072219),
            validator: generated(4194304, seed: 8), expectedTotal: 4194304, httpStatus: 206, resumable: true,
            notice: "hauld exited unexpectedly twice in a row while this transfer was in flight, so it was not started "
                + "again; Resume continues it"
        )
    )

    static let runningInterrupted = RecordGolden(
        description: "a running download as a killed hauld left it",
        json: runningInterruptedJSON,
        record: TaskRecord(
            id: 2, kind: .download, url: "http://127.0.0.1:33569/gen/4m?seed=8&throttle=100000",
            path: "/tmp/golden/work2/crash.bin", createdAt: Date(timeIntervalSinceReferenceDate: 817180867.2072219),
            state: .running, validator: generated(4194304, seed: 8), expectedTotal: 4194304, httpStatus: 200,
            resumable: true, interruptedRuns: 1
        )
    )

    static let retryAfterFailure = RecordGolden(
        description: "an upload that failed with 503 and Retry-After",
        json: retryAfterFailureJSON,
        record: TaskRecord(
            id: 9, kind: .upload, url: "http://127.0.0.1:8080/upload/a b", path: "/tmp/a b",
            createdAt: Date(timeIntervalSinceReferenceDate: 817180000.5), state: .completed,
            outcome: .failure(.http(status: 503, retryAfter: .seconds(120))), httpStatus: 503
        )
    )

    static let cancelingSingleConnection = RecordGolden(
        description: "a canceling download held to one connection",
        json: cancelingSingleConnectionJSON,
        record: TaskRecord(
            id: 10, kind: .download, url: "http://127.0.0.1/", path: "/tmp/x",
            createdAt: Date(timeIntervalSinceReferenceDate: 0), state: .canceling, singleConnection: true
        )
    )

    // MARK: - The files

    static let completedDownloadJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180185.1876813,
          "expectedTotal" : 65536,
          "headers" : {
            "X-Trace" : "1"
          },
          "httpStatus" : 200,
          "id" : 1,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "outcome" : {
            "success" : {

            }
          },
          "overwrite" : true,
          "path" : "/tmp/golden/work/done.bin",
          "resumable" : true,
          "sha256" : "dfdbdf226bd71c82015553cdf1f88574a33c1963a265cffbad96a281cd641726",
          "singleConnection" : false,
          "state" : "completed",
          "url" : "http://127.0.0.1:34601/gen/64k?seed=3",
          "validator" : {
            "etag" : "\"gen-65536-3\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:03 GMT",
            "lastModifiedIsStrong" : true
          }
        }
        """#

    static let failedDownloadJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180185.2557853,
          "expectedTotal" : -1,
          "headers" : {

          },
          "httpStatus" : 404,
          "id" : 2,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "outcome" : {
            "failure" : {
              "_0" : {
                "httpStatus" : 404,
                "isTransient" : false,
                "kind" : "HTTP",
                "message" : "HTTP 404 Not Found"
              }
            }
          },
          "overwrite" : false,
          "path" : "/tmp/golden/work/missing.bin",
          "resumable" : false,
          "singleConnection" : false,
          "state" : "completed",
          "url" : "http://127.0.0.1:34601/gen/1k?status=404"
        }
        """#

    static let suspendedWithPasswordJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180185.3018595,
          "expectedTotal" : -1,
          "headers" : {

          },
          "httpStatus" : 0,
          "id" : 3,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "overwrite" : false,
          "path" : "/tmp/golden/work/later.bin",
          "resumable" : false,
          "singleConnection" : false,
          "state" : "suspended",
          "url" : "http://bob:pw@127.0.0.1:34601/gen/1m?seed=4"
        }
        """#

    static let suspendedWithWeakDateJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180187.0396258,
          "expectedTotal" : 2097152,
          "headers" : {

          },
          "httpStatus" : 200,
          "id" : 5,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "overwrite" : false,
          "path" : "/tmp/golden/work/weak.bin",
          "resumable" : true,
          "singleConnection" : false,
          "state" : "suspended",
          "url" : "http://127.0.0.1:34601/gen/2m?seed=6&throttle=500000&date=last-modified",
          "validator" : {
            "etag" : "\"gen-2097152-6\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:06 GMT",
            "lastModifiedIsStrong" : false
          }
        }
        """#

    static let cancelledJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180188.1235768,
          "expectedTotal" : 2097152,
          "headers" : {

          },
          "httpStatus" : 200,
          "id" : 6,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "outcome" : {
            "failure" : {
              "_0" : {
                "isTransient" : false,
                "kind" : "Cancelled",
                "message" : "the transfer was cancelled"
              }
            }
          },
          "overwrite" : false,
          "path" : "/tmp/golden/work/cancelled.bin",
          "resumable" : true,
          "singleConnection" : false,
          "state" : "completed",
          "url" : "http://127.0.0.1:34601/gen/2m?seed=7&throttle=100000",
          "validator" : {
            "etag" : "\"gen-2097152-7\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:07 GMT",
            "lastModifiedIsStrong" : true
          }
        }
        """#

    static let postUploadJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180188.7936947,
          "expectedTotal" : -1,
          "headers" : {
            "Content-Type" : "application/octet-stream"
          },
          "httpStatus" : 200,
          "id" : 7,
          "interruptedRuns" : 0,
          "kind" : "upload",
          "maxRetries" : 5,
          "method" : "POST",
          "outcome" : {
            "success" : {

            }
          },
          "overwrite" : false,
          "path" : "/tmp/golden/work/up.bin",
          "resumable" : false,
          "singleConnection" : false,
          "state" : "completed",
          "url" : "http://127.0.0.1:34601/upload/up.bin"
        }
        """#

    static let segmentedJSON = #"""
        {
          "connections" : 4,
          "createdAt" : 817180865.11473,
          "expectedTotal" : 8388608,
          "headers" : {

          },
          "httpStatus" : 206,
          "id" : 1,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "overwrite" : false,
          "path" : "/tmp/golden/work2/seg.bin",
          "resumable" : true,
          "segments" : {
            "segments" : [
              {
                "done" : 619824,
                "end" : 2097152,
                "start" : 0
              },
              {
                "done" : 619824,
                "end" : 6291456,
                "start" : 4194304
              },
              {
                "done" : 619824,
                "end" : 4194304,
                "start" : 2097152
              },
              {
                "done" : 619824,
                "end" : 8388608,
                "start" : 6291456
              }
            ],
            "total" : 8388608
          },
          "singleConnection" : false,
          "state" : "suspended",
          "url" : "http://127.0.0.1:33569/gen/8m?seed=5&throttle=300000",
          "validator" : {
            "etag" : "\"gen-8388608-5\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:05 GMT",
            "lastModifiedIsStrong" : true
          }
        }
        """#

    static let crashLoopNoticeJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180867.2072219,
          "expectedTotal" : 4194304,
          "headers" : {

          },
          "httpStatus" : 206,
          "id" : 2,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "notice" : "hauld exited unexpectedly twice in a row while this transfer was in flight, so it was not \#
        started again; Resume continues it",
          "overwrite" : false,
          "path" : "/tmp/golden/work2/crash.bin",
          "resumable" : true,
          "singleConnection" : false,
          "state" : "suspended",
          "url" : "http://127.0.0.1:33569/gen/4m?seed=8&throttle=100000",
          "validator" : {
            "etag" : "\"gen-4194304-8\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:08 GMT",
            "lastModifiedIsStrong" : true
          }
        }
        """#

    static let runningInterruptedJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180867.2072219,
          "expectedTotal" : 4194304,
          "headers" : {

          },
          "httpStatus" : 200,
          "id" : 2,
          "interruptedRuns" : 1,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "overwrite" : false,
          "path" : "/tmp/golden/work2/crash.bin",
          "resumable" : true,
          "singleConnection" : false,
          "state" : "running",
          "url" : "http://127.0.0.1:33569/gen/4m?seed=8&throttle=100000",
          "validator" : {
            "etag" : "\"gen-4194304-8\"",
            "lastModified" : "Mon, 01 Jan 2001 00:00:08 GMT",
            "lastModifiedIsStrong" : true
          }
        }
        """#

    // Not met in the run above, so as `TaskStore` encoded these records on that commit.

    static let retryAfterFailureJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 817180000.5,
          "expectedTotal" : -1,
          "headers" : {

          },
          "httpStatus" : 503,
          "id" : 9,
          "interruptedRuns" : 0,
          "kind" : "upload",
          "maxRetries" : 5,
          "method" : "PUT",
          "outcome" : {
            "failure" : {
              "_0" : {
                "httpStatus" : 503,
                "isTransient" : true,
                "kind" : "HTTP",
                "message" : "HTTP 503 Service Unavailable",
                "retryAfter" : 120
              }
            }
          },
          "overwrite" : false,
          "path" : "/tmp/a b",
          "resumable" : false,
          "singleConnection" : false,
          "state" : "completed",
          "url" : "http://127.0.0.1:8080/upload/a b"
        }
        """#

    static let cancelingSingleConnectionJSON = #"""
        {
          "connections" : 1,
          "createdAt" : 0,
          "expectedTotal" : -1,
          "headers" : {

          },
          "httpStatus" : 0,
          "id" : 10,
          "interruptedRuns" : 0,
          "kind" : "download",
          "maxRetries" : 5,
          "method" : "PUT",
          "overwrite" : false,
          "path" : "/tmp/x",
          "resumable" : false,
          "singleConnection" : true,
          "state" : "canceling",
          "url" : "http://127.0.0.1/"
        }
        """#
}
