import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Downloads into a folder, end to end: hauld names the file from the server's `Content-Disposition` (the test
/// server's `content-disposition=HEX` sends any bytes at all), safely, never onto another file, and keeps the name.
@Suite(.timeLimit(.minutes(3))) struct FolderDownloadTests {
    static let size = 3000
    static let seed = 19

    /// `/gen/3000` with `header` (its bytes, exactly) as its `Content-Disposition`.
    static func query(_ header: [UInt8], size: Int = size, extra: String = "") -> String {
        TestHTTPServer.generatedPath(size: size, seed: seed, contentDisposition: header, extra: extra)
    }

    static func query(_ header: String, size: Int = size, extra: String = "") -> String {
        query(Array(header.utf8), size: size, extra: extra)
    }

    /// Starts a download of `query` into `destination` (a folder), with `options`.
    static func download(
        _ f: TransferFixture, _ query: String, into destination: String, options: [DownloadOption: DBusValue] = [:]
    ) async throws -> ObjectPath {
        let reply = try await f.managerCall(
            .downloadWithOptions, [.string(f.server.url(query)), .string(destination), .vardict(options.byName)]
        )
        return try #require(reply.first?.objectPathValue)
    }

    /// The files in `folder`, by name.
    static func names(in folder: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
    }

    @Test(arguments: [
        ("attachment; filename=\"../../.bashrc\"", "bashrc"),
        ("attachment; filename=\"/etc/passwd\"", "passwd"),
        ("attachment; filename*=UTF-8''a%00b.txt", "a_b.txt"),
        ("attachment; filename*=UTF-8''bell%07%1B%5B2J.txt", "bell__[2J.txt"),
        ("attachment; filename=\"tab\there.txt\"", "tab_here.txt"),
        ("attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
        ("attachment; filename*=UTF-8''%FF%FE.txt; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename=\"first.txt\"; filename=\"second.txt\"", "first.txt"),
        ("attachment; filename=\"say \\\"hi\\\".txt\"", "say \"hi\".txt"),
        ("attachment; filename=\"...\"", "3000"),
    ])
    func hostileNamesAreMadeSafe(_ header: String, _ expected: String) async throws {
        try await TransferFixture.with { f throws in
            let task = try await Self.download(f, Self.query(header), into: f.folder.path + "/")
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.property(task, .path) == .string(f.file(expected)))
            #expect(try Self.names(in: f.folder) == [expected])
            #expect(
                try await TestHTTPServer.sha256(ofFile: f.folder.appendingPathComponent(expected))
                    == (try await TestHTTPServer.sha256OfGenerated(size: Self.size, seed: Self.seed))
            )
            // Nothing landed beside the folder either.
            #expect(try Self.names(in: f.folder.deletingLastPathComponent()).allSatisfy { !$0.contains("bashrc") })
        }
    }

    /// A name of 3700 bytes (as long as a URL carrying it in hex may be; `FileNameTests` cut 4 KiB ones) is cut to
    /// what the file system takes with `.haul-partial`; bytes that are not UTF-8 (a raw ISO-8859-1 `é`) become a
    /// valid name.
    @Test func longAndInvalidNamesStillDownload() async throws {
        try await TransferFixture.with { f throws in
            let long = try await Self.download(
                f, Self.query("attachment; filename=\"\(String(repeating: "x", count: 3700)).iso\""),
                into: f.folder.path
            )
            let invalid = try await Self.download(
                f, Self.query(Array("attachment; filename=\"caf".utf8) + [0xE9] + Array(".txt\"".utf8)),
                into: f.folder.path
            )
            for task in [long, invalid] {
                try await f.wait(task, until: .completed)
                #expect(try await f.errorName(task) == "")
            }
            let names = try Self.names(in: f.folder)
            #expect(names.count == 2)
            let longName = try #require(names.first { $0.hasPrefix("xxx") })
            #expect(longName.hasSuffix(".iso") && longName.utf8.count == 255 - ".haul-partial".utf8.count)
            let other = try #require(names.first { $0.hasPrefix("caf") })
            #expect(other.hasSuffix(".txt"))
        }
    }

    /// The header comes first, then `filename-hint`, then the final URL's last segment (after redirects); a file
    /// destination is never renamed by the header.
    @Test func theNameComesFromTheHeaderTheHintOrTheURL() async throws {
        try await TransferFixture.with { f throws in
            let header = "attachment; filename=\"header.bin\""
            let fromHeader = try await Self.download(
                f, Self.query(header), into: f.folder.path, options: [.filenameHint: .string("hint.bin")]
            )
            let fromHint = try await Self.download(
                f, "/gen/10?id=a", into: f.folder.path, options: [.filenameHint: .string("../hint.bin")]
            )
            let fromURL = try await Self.download(f, "/redirect/302/gen/20", into: f.folder.path)
            let explicit = try await f.download(Self.query(header), to: "exact.bin")
            for task in [fromHeader, fromHint, fromURL, explicit] { try await f.wait(task, until: .completed) }
            #expect(try await f.property(fromHeader, .path) == .string(f.file("header.bin")))
            #expect(try await f.property(fromHint, .path) == .string(f.file("hint.bin")))
            #expect(try await f.property(fromURL, .path) == .string(f.file("20")))
            #expect(try await f.property(explicit, .path) == .string(f.file("exact.bin")))
            #expect(try Self.names(in: f.folder) == ["header.bin", "hint.bin", "20", "exact.bin"])
        }
    }

    /// Tasks started at the same moment with the same name, beside a file of that name: each gets its own, and the
    /// file stays as it was, overwrite or not.
    @Test func simultaneousTasksGetDistinctNames() async throws {
        try await TransferFixture.with { f throws in
            let existing = Data("mine".utf8)
            try existing.write(to: f.folder.appendingPathComponent("same.tar.gz"))
            let query = Self.query("attachment; filename=same.tar.gz", extra: "&delay=0.3")
            let tasks = try await withThrowingTaskGroup(of: ObjectPath.self) { group in
                for index in 0..<4 {
                    group.addTask {
                        try await Self.download(
                            f, query + "&id=\(index)", into: f.folder.path,
                            options: [.overwrite: .boolean(index == 0)]
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for task in tasks {
                try await f.wait(task, until: .completed)
                #expect(try await f.errorName(task) == "")
            }
            #expect(try Data(contentsOf: f.folder.appendingPathComponent("same.tar.gz")) == existing)
            #expect(
                try Self.names(in: f.folder)
                    == ["same.tar.gz", "same (1).tar.gz", "same (2).tar.gz", "same (3).tar.gz", "same (4).tar.gz"]
            )
        }
    }

    /// `Path` is the folder until the first response, then the file's path, announced before any byte arrives. The
    /// response waits 20 s: the first read of `Path` must come before it, on a machine as loaded as the suite's start.
    @Test func thePathIsAnnouncedBeforeTheFirstByte() async throws {
        try await TransferFixture.with { f throws in
            let changes = try await f.client.messages(matching: [
                MatchRule(kind: .signal, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            ])
            let task = try await Self.download(
                f, Self.query("attachment; filename=late.bin", size: 200_000, extra: "&delay=20&throttle=100000"),
                into: f.folder.path
            )
            #expect(try await f.property(task, .path) == .string(f.folder.path))
            try await f.wait(task, until: .completed)
            var pathSeen = false
            for await message in changes where message.path == task {
                let changed = message.body.dropFirst().first?.stringDictionary ?? [:]
                if let path = changed[TaskProperty.path.name]?.unwrapped {
                    #expect(path == .string(f.file("late.bin")))
                    pathSeen = true
                }
                let bytes = changed[TaskProperty.bytesReceived.name]?.unwrapped.uint64Value ?? 0
                #expect(bytes == 0 || pathSeen, "bytes announced before the name")
                if changed[TaskProperty.state.name]?.unwrapped == .state(.completed) { break }
            }
            #expect(pathSeen)
            #expect(try Self.names(in: f.folder) == ["late.bin"])
        }
    }

    /// `""` is the user's download folder, made (mode 0700) when missing.
    @Test func theEmptyDestinationIsTheUsersDownloadFolder() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("haul-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let config = home.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("XDG_DOWNLOAD_DIR=\"$HOME/Fetched/here\"\n".utf8)
            .write(to: config.appendingPathComponent("user-dirs.dirs"))
        try await TransferFixture.with(environment: ["HOME": home.path, "XDG_CONFIG_HOME": config.path]) { f throws in
            let task = try await Self.download(f, Self.query("attachment; filename=mine.bin"), into: "")
            try await f.wait(task, until: .completed)
            let folder = home.appendingPathComponent("Fetched/here")
            #expect(try await f.property(task, .path) == .string(folder.appendingPathComponent("mine.bin").path))
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
            #expect(mode == 0o700)
        }
    }

    /// A `user-dirs.dirs` hauld must not read counts as none, and the folder is `Downloads` at home: a FIFO, which a
    /// blocking open would wait on for a writer, and a file over the limit, which was read whole (a gigabyte of it
    /// took a gigabyte), here with its `XDG_DOWNLOAD_DIR` after the limit.
    @Test(arguments: ["fifo", "oversized"])
    func aUserDirsFileNotToReadLeavesTheDownloadFolderAtHome(_ kind: String) async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("haul-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let config = home.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let userDirs = config.appendingPathComponent("user-dirs.dirs")
        if kind == "fifo" {
            #expect(mkfifo(userDirs.path, 0o600) == 0)
        } else {
            let comment = String(repeating: "# padding\n", count: 7_000)
            try Data((comment + "XDG_DOWNLOAD_DIR=\"$HOME/Elsewhere\"\n").utf8).write(to: userDirs)
        }
        try await TransferFixture.with(environment: ["HOME": home.path, "XDG_CONFIG_HOME": config.path]) { f throws in
            let task = try await Self.download(f, Self.query("attachment; filename=mine.bin"), into: "")
            try await f.wait(task, until: .completed)
            let file = home.appendingPathComponent("Downloads/mine.bin").path
            #expect(try await f.property(task, .path) == .string(file))
        }
    }

    @Test func aMissingFolderOrABadOptionIsRefused() async throws {
        try await TransferFixture.with { f throws in
            await #expect(throws: DBusError.self) {
                _ = try await Self.download(f, "/gen/10", into: f.folder.path + "/missing/")
            }
            await #expect(throws: DBusError.self) {
                _ = try await Self.download(f, "/gen/10", into: f.folder.path, options: [.application: .string("a b")])
            }
            #expect(try Self.names(in: f.folder).isEmpty)
        }
    }

    /// A task suspended mid-way, and one restored by a restarted hauld, keep their names: the rest of the file goes
    /// into the same partial file, and no numbered copy appears.
    @Test func resumeAndRestartKeepTheName() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let state = bus.directory.appendingPathComponent("state")
        let folder = bus.directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let client = try await DBusConnection.connect(address: bus.address)
        let size = 1_048_576
        let query = Self.query("attachment; filename=kept.bin", size: size, extra: "&stall-after=100000")
        let first = try await HauldProcess(bus: bus, stateDirectory: state)
        let hauld = HauldCalls(client)
        let reply = try await hauld.call(.download, [.string(server.url(query)), .string(folder.path)])
        let task = try #require(reply.first?.objectPathValue)
        let partial = folder.appendingPathComponent("kept.bin.haul-partial").path
        try await waitUntil("the partial file to fill", timeout: .seconds(30)) {
            ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) >= 100_000
        }
        _ = await first.stop()
        let second = try await HauldProcess(bus: bus, stateDirectory: state)
        func property(_ name: TaskProperty) async throws -> DBusValue {
            try await hauld.property(name, of: task)
        }
        #expect(try await property(.path) == .string(folder.appendingPathComponent("kept.bin").path))
        try await waitUntil("the restored task to complete", timeout: .seconds(60)) {
            try await property(.state) == .state(.completed)
        }
        #expect(try await property(.errorName) == .string(""))
        #expect(try Self.names(in: folder) == ["kept.bin"])
        #expect(
            try await TestHTTPServer.sha256(ofFile: folder.appendingPathComponent("kept.bin"))
                == (try await TestHTTPServer.sha256OfGenerated(size: size, seed: Self.seed))
        )
        #expect(try await server.stats().ranges(query).contains { $0.hasPrefix("bytes=") }, "resumed, not restarted")
        _ = await second.stop()
        await client.close()
    }
}
