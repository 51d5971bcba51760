import FoundationEssentials
import Glibc

/// A validated local path for a download's destination or an upload's source.
package struct LocalPath: Equatable, Sendable, CustomStringConvertible {
    package let path: String

    package init(_ path: String) throws(TransferRequestError) {
        try Self.check(path)
        self.path = Self.normalized(path)
    }

    /// A folder's path, which may end with `/`.
    package init(folder: String) throws(TransferRequestError) {
        path = Self.normalized(String(try Self.check(folder: folder)))
    }

    /// What `init(_:)` refuses, checked without resolving the path against the file system: for a restored record,
    /// which keeps the path it was given (resolving it cost ten thousand records a `readlink` per component).
    package static func check(_ path: String) throws(TransferRequestError) {
        guard path.hasPrefix("/") else { throw .invalidArgument("'\(path)' is not an absolute path") }
        guard !path.hasSuffix("/") else { throw .invalidArgument("'\(path)' names a directory, not a file") }
        guard !path.utf8.contains(0) else { throw .invalidArgument("the path contains a NUL byte") }
    }

    /// What `init(folder:)` refuses; returns the folder without its trailing slashes.
    @discardableResult
    package static func check(folder: String) throws(TransferRequestError) -> Substring {
        var trimmed = Substring(folder)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed.hasPrefix("/") else { throw .invalidArgument("'\(folder)' is not an absolute path") }
        guard !trimmed.utf8.contains(0) else { throw .invalidArgument("the path contains a NUL byte") }
        return trimmed
    }

    package var description: String { path }

    /// As `NSString.standardizingPath` on Linux, which this replaced: what exists of the path is resolved by the file
    /// system (`realpath`), so that a symbolic link, and `..` after one, mean what the kernel makes of them. A file
    /// that does not exist yet is named in its resolved folder; with no folder either, the path is resolved
    /// lexically.
    static func normalized(_ path: String) -> String {
        if let resolved = realPath(path) { return resolved }
        let (folder, name) = split(path)
        if name != ".", name != "..", let resolved = realPath(folder) {
            return (resolved == "/" ? "" : resolved) + "/" + name
        }
        return lexicallyNormalized(path)
    }

    /// An absolute path's folder (`/` for a file at the root) and last component.
    private static func split(_ path: String) -> (folder: String, name: Substring) {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        return (slash == path.startIndex ? "/" : String(path[..<slash]), path[path.index(after: slash)...])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `.`, `..` and repeated slashes resolved by the text alone; `..` above the root stays at the root.
    static func lexicallyNormalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The folder holding the file: what the destination's checks look at.
    package var folder: String { Self.split(path).folder }
}
