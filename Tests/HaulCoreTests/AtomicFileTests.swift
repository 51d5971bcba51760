import Foundation
import HaulCore
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Atomic file", .timeLimit(.minutes(2)))
struct AtomicFileTests {
    @Test func writesANewFileWithPrivatePermissions() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "state.json")
            try AtomicFile.write(Data("hello".utf8), to: file)
            #expect(try Data(contentsOf: file) == Data("hello".utf8))
            #expect(try permissions(of: file) == 0o600)
            #expect(try entries(of: directory) == ["state.json"])
        }
    }

    @Test func overwritesAnExistingFile() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "state.json")
            try Data("a much longer first version".utf8).write(to: file)
            try AtomicFile.write(Data("second".utf8), to: file)
            #expect(try Data(contentsOf: file) == Data("second".utf8))
            try AtomicFile.write(Data(), to: file)
            #expect(try Data(contentsOf: file).isEmpty)
            #expect(try entries(of: directory) == ["state.json"])
        }
    }

    @Test func writesLargeData() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "big")
            var random = SplitMix64(seed: 42)
            let data = Data((0..<3_000_000).map { _ in UInt8.random(in: .min ... .max, using: &random) })
            try AtomicFile.write(data, to: file)
            #expect(try Data(contentsOf: file) == data)
        }
    }

    @Test func createsMissingDirectoriesPrivately() throws {
        try withTemporaryDirectory { directory in
            let parent = directory.appending(path: "config/haul", directoryHint: .isDirectory)
            let file = parent.appending(path: "indicator.json")
            try AtomicFile.write(Data("{}".utf8), to: file)
            #expect(try Data(contentsOf: file) == Data("{}".utf8))
            #expect(try permissions(of: parent) == 0o700)
            #expect(try permissions(of: directory.appending(path: "config")) == 0o700)
            #expect(try entries(of: parent) == ["indicator.json"])
        }
    }

    @Test func leavesNoTemporaryFilesAfterManyWrites() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "counter")
            for value in 0..<50 {
                try AtomicFile.write(Data("\(value)".utf8), to: file)
            }
            #expect(try String(contentsOf: file, encoding: .utf8) == "49")
            #expect(try entries(of: directory) == ["counter"])
        }
    }

    @Test func failedRenameOverADirectoryCleansUp() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appending(path: "occupied")
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
            let file = URL(filePath: target.path(percentEncoded: false), directoryHint: .notDirectory)
            let error = try #require(throws: AtomicFileError.self) { try AtomicFile.write(Data("x".utf8), to: file) }
            #expect(error.operation == "rename")
            #expect(error.errno == EISDIR)
            #expect(try entries(of: directory) == ["occupied"], "the temporary file is removed")
        }
    }

    @Test func parentThatIsAFileFailsWithErrnoAndPath() throws {
        try withTemporaryDirectory { directory in
            let blocker = directory.appending(path: "blocker")
            try Data().write(to: blocker)
            let file = blocker.appending(path: "state.json")
            let error = try #require(throws: AtomicFileError.self) { try AtomicFile.write(Data("x".utf8), to: file) }
            #expect(error.operation == "open")
            #expect(error.errno == ENOTDIR)
            #expect(error.path.hasPrefix(blocker.path(percentEncoded: false) + "/.state.json.tmp-"))
            #expect(error.description.contains(blocker.path(percentEncoded: false)))
            #expect(error.description.hasSuffix("(errno \(ENOTDIR))"))
            #expect(try entries(of: directory) == ["blocker"])
        }
    }

    // MARK: Files that keep a spare

    /// Writes `text` to `file` as a task record is written: keeping a spare.
    private func writeKeepingSpare(_ text: String, to file: URL) throws {
        if let error = AtomicFile.write([(Data(text.utf8), file, spare: .erased)])[0] { throw error }
    }

    @Test func aFileThatKeepsASpareIsRewrittenWithoutNewInodes() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "7.json")
            let spare = URL(filePath: AtomicFile.spare(of: file.path(percentEncoded: false)))
            #expect(spare.lastPathComponent == ".7.json.spare")
            try writeKeepingSpare("first", to: file)
            try writeKeepingSpare("second", to: file)
            let inodes = Set([try inode(of: file), try inode(of: spare)])
            for version in 3...20 {
                try writeKeepingSpare("version \(version)", to: file)
                #expect(try String(contentsOf: file, encoding: .utf8) == "version \(version)")
            }
            #expect(Set([try inode(of: file), try inode(of: spare)]) == inodes, "the two inodes trade places")
            #expect(try entries(of: directory) == [".7.json.spare", "7.json"])
            #expect(try permissions(of: file) == 0o600)
            #expect(try permissions(of: spare) == 0o600)
        }
    }

    @Test func theSpareKeepsNoOldContents() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "1.json")
            try writeKeepingSpare("https://user:hunter2@example.com/", to: file)
            try writeKeepingSpare("https://example.com/", to: file)
            let spare = URL(filePath: AtomicFile.spare(of: file.path(percentEncoded: false)))
            #expect(try Data(contentsOf: spare).allSatisfy { $0 == 0 }, "the password is gone once the swap is durable")
            #expect(try String(contentsOf: file, encoding: .utf8) == "https://example.com/")
        }
    }

    @Test func aKeptSpareHoldsThePreviousVersionUntilTheNextWrite() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "5.json")
            let spare = URL(filePath: AtomicFile.spare(of: file.path(percentEncoded: false)))
            for text in ["first", "second version", "third"] {
                if let error = AtomicFile.write([(Data(text.utf8), file, spare: .kept)])[0] { throw error }
            }
            #expect(try String(contentsOf: file, encoding: .utf8) == "third")
            #expect(try String(contentsOf: spare, encoding: .utf8) == "second version", "not zeros, not cut short")
            if let error = AtomicFile.write([(Data("4".utf8), file, spare: .kept)])[0] { throw error }
            #expect(try String(contentsOf: spare, encoding: .utf8) == "third", "the longer old contents cut to size")
            #expect(try entries(of: directory) == [".5.json.spare", "5.json"])
        }
    }

    @Test func aSymbolicLinkIsReplacedNotSwappedOrFollowed() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appending(path: "elsewhere")
            try Data("not hauld's".utf8).write(to: target)
            let file = directory.appending(path: "2.json")
            try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
            try writeKeepingSpare("record", to: file)
            try writeKeepingSpare("record 2", to: file)
            #expect(try String(contentsOf: target, encoding: .utf8) == "not hauld's")
            #expect(try String(contentsOf: file, encoding: .utf8) == "record 2")
            var status = stat()
            #expect(lstat(file.path(percentEncoded: false), &status) == 0 && status.st_mode & S_IFMT == S_IFREG)
        }
    }

    @Test func whateverSitsAtTheSparesNameIsReplaced() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "3.json")
            try writeKeepingSpare("first", to: file)
            let spare = AtomicFile.spare(of: file.path(percentEncoded: false))
            // A FIFO would block a plain open for writing; a hard link would let a write reach another name.
            #expect(mkfifo(spare, 0o600) == 0)
            try writeKeepingSpare("second", to: file)
            #expect(try String(contentsOf: file, encoding: .utf8) == "second")
            unlink(spare)
            let other = directory.appending(path: "other")
            try Data("keep me".utf8).write(to: other)
            #expect(link(other.path(percentEncoded: false), spare) == 0)
            try writeKeepingSpare("third", to: file)
            #expect(try String(contentsOf: other, encoding: .utf8) == "keep me")
            #expect(try String(contentsOf: file, encoding: .utf8) == "third")
            #expect(try permissions(of: URL(filePath: spare)) == 0o600)
        }
    }

    @Test func aLargeBatchIsWrittenWhole() throws {
        try withTemporaryDirectory { directory throws in
            let count = AtomicFile.filesSyncedTogether * 5
            let files = (0..<count).map { directory.appending(path: "\($0).json") }
            for round in 0..<3 {
                let errors = AtomicFile.write(files.enumerated().map { (Data("\($0) \(round)".utf8), $1, .erased) })
                #expect(errors.allSatisfy { $0 == nil })
            }
            for (index, file) in files.enumerated() {
                #expect(try String(contentsOf: file, encoding: .utf8) == "\(index) 2")
                let spare = URL(filePath: AtomicFile.spare(of: file.path(percentEncoded: false)))
                #expect(try Data(contentsOf: spare).allSatisfy { $0 == 0 })
            }
            #expect(try entries(of: directory).count == 2 * count, "a record and its spare each, nothing else")
        }
    }

    @Test func removeTakesTheFileAndItsSpare() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appending(path: "4.json")
            try writeKeepingSpare("a", to: file)
            try writeKeepingSpare("b", to: file)
            try AtomicFile.remove(file)
            #expect(try entries(of: directory) == [])
            try AtomicFile.remove(file)  // not there: not an error
        }
    }

    private func inode(of url: URL) throws -> UInt64 {
        var status = stat()
        guard lstat(url.path(percentEncoded: false), &status) == 0 else { throw POSIXError(.ENOENT) }
        return UInt64(status.st_ino)
    }

    @Test func aPathWithDotsIsStandardized() throws {
        try withTemporaryDirectory { directory in
            let sub = directory.appending(path: "sub", directoryHint: .isDirectory)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            let dotted = URL(filePath: directory.path(percentEncoded: false) + "/sub/./../state.json")
            try AtomicFile.write(Data("dots".utf8), to: dotted)
            #expect(try String(contentsOf: directory.appending(path: "state.json"), encoding: .utf8) == "dots")
            #expect(try entries(of: sub) == [])
        }
    }

    @Test func directoryURLIsRefused() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "dir", directoryHint: .isDirectory)
            let error = try #require(throws: AtomicFileError.self) { try AtomicFile.write(Data(), to: url) }
            #expect(error.errno == EISDIR)
            #expect(try entries(of: directory) == [])
        }
    }

    @Test func nonFileURLIsRefused() throws {
        let url = try #require(URL(string: "https://example.com/state.json"))
        let error = try #require(throws: AtomicFileError.self) { try AtomicFile.write(Data(), to: url) }
        #expect(error.errno == EINVAL)
        #expect(error.path == "https://example.com/state.json")
    }

    @Test func errorDescriptionCarriesOperationPathAndErrno() {
        let error = AtomicFileError(operation: "fsync", path: "/x/y", errno: EIO)
        #expect(error.description == "fsync /x/y: \(String(cString: strerror(EIO))) (errno \(EIO))")
    }
}
