import Dispatch
package import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps one JSON file per task, `<id>.json`, in a directory of its own.
///
/// Each file is written with ``AtomicFile`` (mode 0600, in a directory created 0700), so a crash leaves every record
/// either as it was or as it became; a record keeps a spare, `.<id>.json.spare`, as it is rewritten at every change.
/// Loading never fails as a whole: a damaged file costs only its own task and is reported, so the daemon can log it and
/// start with the rest.
package struct TaskStore: Sendable {
    /// The directory holding the records.
    package let directory: URL

    /// Creates a store for `directory`; nothing is read or created until used.
    package init(directory: URL) {
        self.directory = directory
    }

    /// Writes `record` to `<id>.json`, replacing the previous version atomically.
    ///
    /// Throws an encoding error (none is expected: every field encodes) or ``AtomicFileError``.
    package func save(_ record: TaskRecord) throws {
        if let error = AtomicFile.write([(try Self.encoded(record), url(for: record.id), spare: .erased)])[0] {
            throw error
        }
    }

    /// The contents of a record's file.
    package static func encoded(_ record: TaskRecord, with encoder: JSONEncoder = recordEncoder()) throws -> Data {
        try encoder.encode(record)
    }

    /// The encoder of record files (one may serve many records): one line, the keys in no particular order.
    /// Pretty-printed with sorted keys, a record took 2.3 times as long to encode, and a `SuspendAll` encodes ten
    /// thousand.
    package static func recordEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }

    /// Deletes the record of task `id`; a record that is not there is not an error (forgetting is idempotent).
    ///
    /// The highest id ever removed is kept in `removed-id`, written first: forgetting the newest task and restarting
    /// must not give its id to the next task (a client may still hold the old object path).
    package func remove(id: UInt32) throws(AtomicFileError) {
        if let error = remove(ids: [id])[id] { throw error }
    }

    /// Deletes several records as ``remove(id:)`` does each, writing `removed-id` once for all; returns the error of
    /// each record that could not be removed.
    package func remove(ids: [UInt32]) -> [UInt32: AtomicFileError] {
        if let highest = ids.max(), highest > highestRemovedID() ?? 0 {
            do {
                try AtomicFile.write(Data("\(highest)\n".utf8), to: removedIDURL)
            } catch {
                return Dictionary(ids.map { ($0, error) }) { first, _ in first }
            }
        }
        var errors: [UInt32: AtomicFileError] = [:]
        for id in ids {
            do throws(AtomicFileError) {
                try AtomicFile.remove(url(for: id))
            } catch {
                errors[id] = error
            }
        }
        return errors
    }

    /// What ``loadAll()`` found.
    package struct Contents: Sendable {
        /// The usable records, sorted by id.
        package var records: [TaskRecord] = []
        /// A message for each file that could not be used.
        package var problems: [String] = []
        /// The ids that a new task must not get: those of every record file, usable or not (a new task must never
        /// overwrite what someone may still want to repair), and the highest id ever removed.
        package var takenIDs: Set<UInt32> = []
    }

    /// Reads every record, with a message for each file that could not be used: ``listing()``, then ``load(_:)`` of
    /// every record it found.
    package func loadAll() -> Contents {
        let listing = listing()
        var contents = load(listing.ids[...])
        contents.problems = listing.problems + contents.problems
        contents.takenIDs = listing.takenIDs
        return contents
    }

    /// The record files in the folder, not yet read.
    package struct Listing: Sendable {
        /// The id of each file named `<id>.json`, lowest first.
        package var ids: [UInt32] = []
        /// As ``Contents/takenIDs``.
        package var takenIDs: Set<UInt32> = []
        /// A message if the folder could not be read.
        package var problems: [String] = []
    }

    /// The record files in the folder, which a restore then reads a batch at a time with ``load(_:)``.
    ///
    /// Only files named `<id>.json` count, so the temporary files of an interrupted ``AtomicFile`` write and anything
    /// else are ignored. A missing directory means no tasks.
    package func listing() -> Listing {
        let directoryPath = directory.path(percentEncoded: false)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directoryPath)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return Listing()
        } catch {
            return Listing(problems: ["cannot read the task directory \(directoryPath): \(error)"])
        }
        var listing = Listing(ids: names.compactMap(Self.id(fromFileName:)).sorted())
        listing.takenIDs = Set(listing.ids)
        if let removed = highestRemovedID() { listing.takenIDs.insert(removed) }
        return listing
    }

    /// Reads and decodes the records of `ids` on every core, in their order. A file that cannot be read or decoded,
    /// or that holds another task than its name says, is reported in `problems` and left in place; `takenIDs` is
    /// empty.
    package func load(_ ids: ArraySlice<UInt32>) -> Contents {
        // In pieces of 64, so that a restore's batch of 256 has one for each core and a few to balance them.
        let chunks = stride(from: ids.startIndex, to: ids.endIndex, by: 64).map {
            ids[$0..<min($0 + 64, ids.endIndex)]
        }
        let loaded = Mutex([[Result<TaskRecord, LoadFailure>]](repeating: [], count: chunks.count))
        // Paths joined as text: a URL built for each of ten thousand records took a tenth of their decoding.
        let path = directory.path(percentEncoded: false)
        let folder = path.hasSuffix("/") ? path : path + "/"
        DispatchQueue.concurrentPerform(iterations: chunks.count) { index in
            let decoder = JSONDecoder()
            let results = chunks[index].map { id in load(id, in: folder, with: decoder) }
            loaded.withLock { $0[index] = results }
        }
        var contents = Contents()
        for result in loaded.withLock({ $0 }).joined() {
            switch result {
            case .success(let record): contents.records.append(record)
            case .failure(let failure): contents.problems.append(failure.message)
            }
        }
        return contents
    }

    /// Far above any record hauld writes (a URL of 8 KiB at most, headers of 32 KiB, paths, a segment plan): a larger
    /// file is not one.
    package static let largestRecord = 16 << 20

    /// Why one record file could not be used.
    private struct LoadFailure: Error {
        let message: String
    }

    /// Reads record `id` from `folder`, a path ending in "/".
    private func load(_ id: UInt32, in folder: String, with decoder: JSONDecoder) -> Result<TaskRecord, LoadFailure> {
        let path = folder + Self.fileName(of: id)
        do {
            let data = try RegularFile.contents(of: path, limit: Self.largestRecord)
            let record = try decoder.decode(TaskRecord.self, from: data)
            guard record.id == id else {
                return .failure(LoadFailure(message: "task record \(path) holds task \(record.id); ignored"))
            }
            return .success(record)
        } catch {
            return .failure(LoadFailure(message: "cannot load task record \(path): \(error); ignored"))
        }
    }

    /// The id for a new task: one more than the highest `taken`, starting at 1. Ids are not reused while a higher one
    /// exists; only if `UInt32.max` is taken does the lowest free id come back.
    package func nextID(taken: Set<UInt32>) -> UInt32 {
        guard let highest = taken.max() else { return 1 }
        if highest < .max {
            return highest + 1
        }
        // 2^32 - 1 ids cannot all be taken by records that fit in memory.
        return (1...UInt32.max).first { !taken.contains($0) } ?? 1
    }

    /// The id for the task after the one given `last`: the next one up that `isTaken` does not claim, starting again
    /// at 1 past `UInt32.max` (reachable only through a record file of that name). Never traps, never a taken id while
    /// any is free.
    package func nextID(after last: UInt32, isTaken: (UInt32) -> Bool) -> UInt32 {
        var candidate = last
        repeat {
            candidate = candidate == .max ? 1 : candidate + 1
        } while isTaken(candidate) && candidate != last
        return candidate
    }

    /// `removed-id` holds one number of at most ten digits (and perhaps a line break).
    private static let largestRemovedID = 64

    private var removedIDURL: URL { directory.appending(path: "removed-id", directoryHint: .notDirectory) }

    /// The id in `removed-id`; nil when there is none (or it is unreadable: then only the records count).
    private func highestRemovedID() -> UInt32? {
        let path = removedIDURL.path(percentEncoded: false)
        guard let data = try? RegularFile.contents(of: path, limit: Self.largestRemovedID),
            let text = String(data: data, encoding: .utf8)
        else {
            return nil
        }
        return UInt32(text.trimmingWhitespace())
    }

    /// The file of task `id`'s record.
    package func url(for id: UInt32) -> URL {
        directory.appending(path: Self.fileName(of: id), directoryHint: .notDirectory)
    }

    /// The name of task `id`'s record file, `<id>.json`.
    private static func fileName(of id: UInt32) -> String { "\(id)\(recordSuffix)" }

    private static let recordSuffix = ".json"

    /// The id of a file named exactly `<id>.json` (no sign, no leading zero), else nil.
    private static func id(fromFileName name: String) -> UInt32? {
        guard name.hasSuffix(recordSuffix) else { return nil }
        let stem = String(name.dropLast(recordSuffix.count))
        guard let id = UInt32(stem), String(id) == stem else { return nil }
        return id
    }
}
