import Foundation
import HaulCore
import Testing

@Suite("Task store", .timeLimit(.minutes(2)))
struct TaskStoreTests {
    let createdAt = Date(timeIntervalSince1970: 1_700_000_000.125)

    func download(_ id: UInt32) throws -> TaskRecord {
        var options = DownloadOptions()
        options.headers = ["Authorization": "Bearer t"]
        options.sha256 = String(repeating: "ab", count: 32)
        options.overwrite = true
        options.maxRetries = 9
        var record = TaskRecord(
            id: id,
            download: try TransferURL("https://alice:s3cret@example.test/file.iso"),
            to: .file(try LocalPath("/home/alice/file.iso")),
            options: options,
            createdAt: createdAt
        )
        record.state = .running
        record.validator = ResumeValidator(etag: #""v1""#, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        record.expectedTotal = 1 << 40
        record.httpStatus = 206
        record.resumable = true
        return record
    }

    func upload(_ id: UInt32) throws -> TaskRecord {
        var options = UploadOptions()
        options.method = .post
        options.headers = ["Content-Type": "application/octet-stream"]
        var record = TaskRecord(
            id: id,
            upload: try LocalPath("/home/alice/photo.jpg"),
            to: try TransferURL("http://example.test/upload"),
            options: options,
            createdAt: createdAt
        )
        record.state = .completed
        record.outcome = .failure(.http(status: 503, retryAfter: .seconds(120)))
        record.httpStatus = 503
        return record
    }

    @Test func recordsRoundTripSortedById() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory.appending(path: "tasks", directoryHint: .isDirectory))
            let records = [
                try upload(12), try download(3),
                TaskRecord(
                    id: 7,
                    kind: .download,
                    url: "http://example.test/",
                    path: "/tmp/x",
                    createdAt: createdAt
                ),
            ]
            for record in records {
                try store.save(record)
            }
            let loaded = store.loadAll()
            #expect(loaded.problems == [])
            #expect(loaded.records == records.sorted { $0.id < $1.id })
            #expect(try entries(of: store.directory) == ["12.json", "3.json", "7.json"])
        }
    }

    @Test func filesArePrivateAndKeepThePassword() throws {
        try withTemporaryDirectory { directory in
            let tasks = directory.appending(path: "tasks", directoryHint: .isDirectory)
            let store = TaskStore(directory: tasks)
            try store.save(try download(1))
            let file = tasks.appending(path: "1.json")
            #expect(try permissions(of: file) == 0o600)
            #expect(try permissions(of: tasks) == 0o700)
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains("alice:s3cret@"), "resuming needs the credentials")
            #expect(!text.contains("bytesReceived"), "byte counts come from the partial file")
        }
    }

    @Test func optionsComeBack() throws {
        let download = try download(1)
        #expect(download.kind == .download)
        #expect(download.downloadOptions.headers == ["Authorization": "Bearer t"])
        #expect(download.downloadOptions.sha256 == String(repeating: "ab", count: 32))
        #expect(download.downloadOptions.overwrite)
        #expect(download.downloadOptions.maxRetries == 9)
        #expect(!download.downloadOptions.startSuspended)
        let upload = try upload(2)
        #expect(upload.kind == .upload)
        #expect(upload.uploadOptions.method == .post)
        #expect(upload.uploadOptions.headers == ["Content-Type": "application/octet-stream"])
        #expect(upload.url == "http://example.test/upload")
        #expect(upload.path == "/home/alice/photo.jpg")
    }

    @Test func savingReplacesAndRemovingForgets() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            var record = try download(4)
            try store.save(record)
            record.state = .suspended
            try store.save(record)
            #expect(store.loadAll().records == [record])
            try store.remove(id: 4)
            #expect(store.loadAll().records == [])
            try store.remove(id: 4)
            try store.remove(id: 99)
            #expect(try entries(of: directory) == ["removed-id"])
        }
    }

    /// A restore lists the records, then reads them a batch at a time: the listing reads no record, and a batch
    /// only its own, in order.
    @Test func aListingNamesTheRecordsAndABatchReadsOnlyItsOwn() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            for id: UInt32 in [1, 2, 3, 5, 9] { try store.save(try download(id)) }
            try store.remove(id: 9)
            try Data("not json".utf8).write(to: store.url(for: 3))
            let listing = store.listing()
            #expect(listing.ids == [1, 2, 3, 5])
            #expect(listing.takenIDs == [1, 2, 3, 5, 9])
            #expect(listing.problems == [])
            let batch = store.load(listing.ids[1...2])
            #expect(batch.records.map(\.id) == [2])
            #expect(batch.problems.count == 1 && batch.problems[0].contains("3.json"))
            #expect(store.load(listing.ids[3...]).records.map(\.id) == [5])
        }
    }

    @Test func aMissingDirectoryHoldsNoTasks() {
        let store = TaskStore(directory: URL(filePath: "/nonexistent-haul-\(UUID().uuidString)/tasks"))
        let loaded = store.loadAll()
        #expect(loaded.records == [] && loaded.problems == [])
    }

    @Test func corruptFilesAreReportedAndTheRestLoads() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            try store.save(try download(1))
            try store.save(try upload(5))
            let good = try String(contentsOf: directory.appending(path: "1.json"), encoding: .utf8)
            let broken: [String: String] = [
                "2.json": "{ not json",
                "3.json": good,  // holds task 1
                "4.json": good.replacingOccurrences(of: #""state":"running""#, with: #""state":"completed""#),
                "6.json": good.replacingOccurrences(of: "https://alice", with: "ftp://alice"),
                "8.json": good.replacingOccurrences(
                    of: "\"expectedTotal\":1099511627776",
                    with: "\"expectedTotal\":-2"
                ),
                "9.json": good.replacingOccurrences(of: #""method":"PUT""#, with: #""method":"DELETE""#),
                "10.json": good.replacingOccurrences(of: String(repeating: "ab", count: 32), with: "xyz"),
            ]
            for (name, contents) in broken {
                #expect(contents != good || name == "3.json", "\(name) must differ from the good record")
                try Data(contents.utf8).write(to: directory.appending(path: name))
            }
            let loaded = store.loadAll()
            #expect(loaded.records.map(\.id) == [1, 5])
            #expect(loaded.takenIDs == [1, 2, 3, 4, 5, 6, 8, 9, 10])
            #expect(store.nextID(taken: loaded.takenIDs) == 11, "a damaged record's id is not given to a new task")
            #expect(loaded.problems.count == broken.count)
            for name in broken.keys {
                let path = directory.appending(path: name).path(percentEncoded: false)
                #expect(loaded.problems.contains { $0.contains(path) }, "\(name) is reported")
            }
            #expect(loaded.problems.contains { $0.contains("holds task 1") })
        }
    }

    @Test func otherFilesAreIgnored() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            try store.save(try download(1))
            for name in [".2.json.tmp-1f2e", "notes.txt", "007.json", "-1.json", "x.json", "4294967296.json"] {
                try Data("garbage".utf8).write(to: directory.appending(path: name))
            }
            let loaded = store.loadAll()
            #expect(loaded.records.map(\.id) == [1])
            #expect(loaded.problems == [])
            #expect(loaded.takenIDs == [1])
        }
    }

    /// What is not a regular file at a record's name is reported, not read: a FIFO would hold the start for good, a
    /// link would be followed anywhere, a directory cannot be read, and a huge file is no record.
    @Test func onlyRegularFilesOfARecordsSizeAreRead() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            try store.save(try download(1))
            let path = { (name: String) in directory.appending(path: name).path(percentEncoded: false) }
            #expect(mkfifo(path("2.json"), 0o600) == 0)
            // A good record of task 3, elsewhere.
            try TaskStore(directory: directory.appending(path: "elsewhere")).save(try download(3))
            #expect(symlink(path("elsewhere/3.json"), path("3.json")) == 0)
            #expect(mkdir(path("4.json"), 0o700) == 0)
            let huge = FileManager.default.createFile(atPath: path("5.json"), contents: nil)
            #expect(huge && truncate(path("5.json"), off_t(TaskStore.largestRecord + 1)) == 0)

            let loaded = store.loadAll()
            #expect(loaded.records.map(\.id) == [1])
            #expect(loaded.takenIDs == [1, 2, 3, 4, 5])
            for name in ["2.json", "3.json", "4.json", "5.json"] {
                #expect(loaded.problems.contains { $0.contains(path(name)) }, "\(name) is reported")
            }
            #expect(loaded.problems.count == 4)
        }
    }

    /// `removed-id` is read the same way: a link in its place is not followed (to a number that would hold back ids),
    /// a FIFO not waited on.
    @Test func aRemovedIDThatIsNoRegularFileIsLeftUnread() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            try store.save(try download(1))
            let removedID = directory.appending(path: "removed-id").path(percentEncoded: false)
            let elsewhere = directory.appending(path: "elsewhere")
            try Data("7".utf8).write(to: elsewhere)
            #expect(symlink(elsewhere.path(percentEncoded: false), removedID) == 0)
            #expect(store.loadAll().takenIDs == [1])
            #expect(unlink(removedID) == 0 && mkfifo(removedID, 0o600) == 0)
            let loaded = store.loadAll()
            #expect(loaded.records.map(\.id) == [1])
            #expect(loaded.takenIDs == [1])
        }
    }

    @Test func anUnreadableDirectoryIsAProblem() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "tasks")
            try Data().write(to: file)
            let loaded = TaskStore(directory: file).loadAll()
            #expect(loaded.records == [])
            #expect(loaded.problems.count == 1)
        }
    }

    @Test func missingOptionalFieldsTakeTheirDefaults() throws {
        let json = """
            {"id": 3, "kind": "upload", "url": "http://example.test/u", "path": "/tmp/u", "state": "suspended",
             "createdAt": 0}
            """
        let record = try JSONDecoder().decode(TaskRecord.self, from: Data(json.utf8))
        #expect(
            record
                == TaskRecord(
                    id: 3,
                    kind: .upload,
                    url: "http://example.test/u",
                    path: "/tmp/u",
                    createdAt: Date(timeIntervalSinceReferenceDate: 0)
                )
        )
        #expect(record.expectedTotal == -1 && record.maxRetries == 5 && record.method == .put)
        #expect(record.interruptedRuns == 0 && record.notice == nil, "a record from before the crash-loop guard")
    }

    @Test func theCrashLoopGuardsFieldsRoundTrip() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            var record = try download(2)
            record.state = .suspended
            record.interruptedRuns = 2
            record.notice = "why"
            try store.save(record)
            #expect(store.loadAll().records == [record])
        }
    }

    /// Numbers a damaged or hostile file may hold: each makes the record corrupt, none traps.
    @Test(arguments: [
        (#""id": 1"#, #""id": 4294967296"#), (#""id": 1"#, #""id": -1"#), (#""id": 1"#, #""id": 1e30"#),
        (#""id": 1"#, #""id": 1.5"#), (#""expectedTotal": 1"#, #""expectedTotal": 1e300"#),
        (#""expectedTotal": 1"#, #""expectedTotal": 9223372036854775808"#),
        (#""httpStatus": 206"#, #""httpStatus": -206"#), (#""maxRetries": 9"#, #""maxRetries": 4294967296"#),
        (#""interruptedRuns": 0"#, #""interruptedRuns": -1"#), (#""createdAt": 0"#, #""createdAt": 1e999"#),
        (#""createdAt": 0"#, #""createdAt": "yesterday""#), (#""state": "running""#, #""state": 1"#),
    ])
    func hostileNumbersMakeARecordCorrupt(_ replacement: (String, String)) throws {
        let json = """
            {"id": 1, "kind": "download", "url": "http://example.test/", "path": "/tmp/x", "state": "running",
             "createdAt": 0, "expectedTotal": 1, "httpStatus": 206, "maxRetries": 9, "interruptedRuns": 0}
            """
        #expect(try JSONDecoder().decode(TaskRecord.self, from: Data(json.utf8)).id == 1)
        let hostile = json.replacingOccurrences(of: replacement.0, with: replacement.1)
        #expect(hostile != json)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(TaskRecord.self, from: Data(hostile.utf8)) }
    }

    @Test func outcomeExactlyWhenCompleted() throws {
        let running =
            #"{"id":1,"kind":"download","url":"http://e.test/","path":"/tmp/a","state":"running","createdAt":0,"#
            + #""outcome":{"success":{}}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TaskRecord.self, from: Data(running.utf8)) }
        let completed =
            #"{"id":1,"kind":"download","url":"http://e.test/","path":"/tmp/a","state":"completed","#
            + #""createdAt":0}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TaskRecord.self, from: Data(completed.utf8)) }
    }

    @Test func aRemovedIDIsNotGivenAgain() throws {
        try withTemporaryDirectory { directory in
            let store = TaskStore(directory: directory)
            for id: UInt32 in [1, 2, 3] { try store.save(try download(id)) }
            try store.remove(id: 3)
            try store.remove(id: 1)
            let loaded = TaskStore(directory: directory).loadAll()
            #expect(loaded.records.map(\.id) == [2])
            #expect(store.nextID(taken: loaded.takenIDs) == 4)
        }
    }

    @Test func nextID() {
        let store = TaskStore(directory: URL(filePath: "/unused"))
        #expect(store.nextID(taken: []) == 1)
        #expect(store.nextID(taken: [3, 7]) == 8)
        #expect(store.nextID(taken: [.max, 1]) == 2)
    }

    /// After a record file named 4294967295.json, new ids start again from the lowest free one, never a taken one.
    @Test func nextIDAfterOneGiven() {
        let store = TaskStore(directory: URL(filePath: "/unused"))
        #expect(store.nextID(after: 7) { _ in false } == 8)
        #expect(store.nextID(after: 7) { $0 == 8 || $0 == 9 } == 10)
        #expect(store.nextID(after: .max) { _ in false } == 1)
        #expect(store.nextID(after: .max - 1) { $0 == .max || $0 == 1 } == 2)
    }
}
