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
