import Foundation
import HaulCore
import Testing

/// The task record files hauld has written stay readable, and today's hauld writes the same keys and values, on one
/// line (`RecordGoldens`); names in a file are the record's own, not the bus strings.
@Suite("Task record format", .timeLimit(.minutes(2)))
struct TaskRecordFormatTests {
    @Test(arguments: RecordGoldens.all)
    func aSavedRecordLoads(_ golden: RecordGolden) throws {
        #expect(try JSONDecoder().decode(TaskRecord.self, from: Data(golden.json.utf8)) == golden.record)
    }

    @Test(arguments: RecordGoldens.all)
    func savingARecordGivesTheSameKeysAndValuesOnOneLine(_ golden: RecordGolden) throws {
        try withTemporaryDirectory { directory in
            try TaskStore(directory: directory).save(golden.record)
            let file = try Data(contentsOf: directory.appending(path: "\(golden.record.id).json"))
            #expect(!file.contains(UInt8(ascii: "\n")))
            #expect(try Self.canonical(file) == Self.canonical(Data(golden.json.utf8)))
        }
    }

    /// A JSON document with its keys sorted and no white space: what two files that say the same have in common.
    static func canonical(_ json: Data) throws -> String {
        let object = try JSONSerialization.jsonObject(with: json)
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// The completed download of `RecordGoldens` as the first hauld wrote it: no connections, no crash-loop count,
    /// and a validator without `lastModifiedIsStrong` (its date then counts as weak).
    @Test func aRecordOfTheFirstHauldLoads() throws {
        let json = #"""
            {
              "createdAt" : 817180185.1876813,
              "expectedTotal" : 65536,
              "headers" : {
                "X-Trace" : "1"
              },
              "httpStatus" : 200,
              "id" : 1,
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
              "state" : "completed",
              "url" : "http://127.0.0.1:34601/gen/64k?seed=3",
              "validator" : {
                "etag" : "\"gen-65536-3\"",
                "lastModified" : "Mon, 01 Jan 2001 00:00:03 GMT"
              }
            }
            """#
        var expected = RecordGoldens.completedDownload.record
        expected.validator?.lastModifiedIsStrong = false
        #expect(try JSONDecoder().decode(TaskRecord.self, from: Data(json.utf8)) == expected)
    }

    /// A record from between the crash-loop guard and segmented downloads: no `connections`, `segments` or
    /// `singleConnection`.
    @Test func aRecordFromBeforeSegmentedDownloadsLoads() throws {
        let json = RecordGoldens.crashLoopNotice.json
            .replacingOccurrences(of: "  \"connections\" : 1,\n", with: "")
            .replacingOccurrences(of: "  \"singleConnection\" : false,\n", with: "")
        #expect(!json.contains("connections") && !json.contains("singleConnection"))
        let record = try JSONDecoder().decode(TaskRecord.self, from: Data(json.utf8))
        #expect(record == RecordGoldens.crashLoopNotice.record)
    }

    /// A task's own rate limit is saved only when it has one, so records without one keep their bytes; a limit the
    /// rules do not allow makes the record corrupt.
    @Test func aRateLimitIsSavedWhenSet() throws {
        var record = RecordGoldens.crashLoopNotice.record
        #expect(try savedObject(record)["rateLimit"] == nil)
        record.rateLimit = 65536
        #expect(try savedObject(record)["rateLimit"] as? Int == 65536)
        let saved = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(TaskRecord.self, from: saved) == record)
        let json = RecordGoldens.crashLoopNotice.json.replacingOccurrences(
            of: "  \"connections\" : 1,\n", with: "  \"connections\" : 1,\n  \"rateLimit\" : 100,\n"
        )
        #expect(json.contains("rateLimit"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TaskRecord.self, from: Data(json.utf8)) }
    }

    /// A download into a folder keeps its folder, that it awaits a name, the client's hint and who asked; once
    /// named, its file's path. Records without them keep their bytes (the goldens), and only a download awaits a name.
    @Test func namesAndApplicationsAreSavedWhenSet() throws {
        var record = RecordGoldens.crashLoopNotice.record
        for key in ["awaitsName", "filenameHint", "application"] { #expect(try savedObject(record)[key] == nil) }
        record.path = "/tmp/golden"
        record.awaitsName = true
        record.filenameHint = "hint.iso"
        record.application = "org.mozilla.firefox"
        let saved = try savedObject(record)
        #expect(saved["path"] as? String == "/tmp/golden" && saved["awaitsName"] as? Bool == true)
        #expect(saved["filenameHint"] as? String == "hint.iso")
        #expect(saved["application"] as? String == "org.mozilla.firefox")
        #expect(try JSONDecoder().decode(TaskRecord.self, from: JSONEncoder().encode(record)) == record)
        record.kind = .upload
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(TaskRecord.self, from: JSONEncoder().encode(record))
        }
    }

    /// Every state, kind, error kind and upload method has a name in the file, spelled here as files hold it.
    @Test func everyValueIsSavedUnderItsName() throws {
        let states: [TransferTaskState: String] = [
            .running: "running", .suspended: "suspended", .canceling: "canceling", .completed: "completed",
        ]
        let kinds: [TransferKind: String] = [.download: "download", .upload: "upload"]
        let methods: [UploadOptions.Method: String] = [.put: "PUT", .post: "POST"]
        let errorKinds: [TransferErrorKind: String] = [
            .invalidArgument: "InvalidArgument", .notFound: "NotFound", .fileExists: "FileExists",
            .permissionDenied: "PermissionDenied", .network: "Network", .http: "HTTP", .cancelled: "Cancelled",
            .checksumMismatch: "ChecksumMismatch", .diskFull: "DiskFull", .timeout: "Timeout",
        ]
        #expect(states.count == TransferTaskState.allCases.count && kinds.count == TransferKind.allCases.count)
        #expect(errorKinds.count == TransferErrorKind.allCases.count)

        var record = RecordGoldens.cancelingSingleConnection.record
        for (state, name) in states {
            record.state = state
            record.outcome = state == .completed ? .success : nil
            #expect(try savedObject(record)["state"] as? String == name)
        }
        for (kind, name) in kinds {
            record.kind = kind
            #expect(try savedObject(record)["kind"] as? String == name)
        }
        for (method, name) in methods {
            record.method = method
            #expect(try savedObject(record)["method"] as? String == name)
        }
        record.state = .completed
        for (kind, name) in errorKinds {
            record.outcome = .failure(TransferFailure(kind: kind, message: "m", isTransient: false))
            let outcome = try savedObject(record)["outcome"] as? [String: Any]
            let failure = (outcome?["failure"] as? [String: Any])?["_0"] as? [String: Any]
            #expect(failure?["kind"] as? String == name, "\(kind)")
        }
    }

    /// A name the record format does not have makes the file corrupt, and the error says which.
    @Test(arguments: [
        (#""state" : "canceling""#, #""state" : "paused""#, "'paused' is not a task state"),
        (#""kind" : "download""#, #""kind" : "Download""#, "'Download' is not a task kind"),
        (#""method" : "PUT""#, #""method" : "put""#, "'put' is not an upload method"),
    ])
    func anUnknownNameMakesARecordCorrupt(_ replacement: (String, String, String)) throws {
        let json = RecordGoldens.cancelingSingleConnection.json
        let damaged = json.replacingOccurrences(of: replacement.0, with: replacement.1)
        #expect(damaged != json)
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(TaskRecord.self, from: Data(damaged.utf8))
        }
        #expect(String(describing: error).contains(replacement.2), "\(String(describing: error))")
    }

    @Test func anUnknownErrorKindMakesARecordCorrupt() throws {
        let json = RecordGoldens.failedDownload.json
        let damaged = json.replacingOccurrences(of: #""kind" : "HTTP""#, with: #""kind" : "Teapot""#)
        #expect(damaged != json)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TaskRecord.self, from: Data(damaged.utf8)) }
    }

    /// An outcome holds exactly one of `success` and `failure`.
    @Test(arguments: [#"{}"#, #"{"success": {}, "failure": {"_0": {}}}"#, #"{"success": true}"#])
    func aMalformedOutcomeMakesARecordCorrupt(_ outcome: String) throws {
        let json = RecordGoldens.postUpload.json
        let damaged = json.replacingOccurrences(of: "{\n    \"success\" : {\n\n    }\n  }", with: outcome)
        #expect(damaged != json)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TaskRecord.self, from: Data(damaged.utf8)) }
    }

    /// The record as saved, parsed back into a dictionary.
    private func savedObject(_ record: TaskRecord) throws -> [String: Any] {
        try withTemporaryDirectory { directory in
            try TaskStore(directory: directory).save(record)
            let data = try Data(contentsOf: directory.appending(path: "\(record.id).json"))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
    }
}
