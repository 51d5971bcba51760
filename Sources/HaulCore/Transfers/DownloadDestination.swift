import Glibc

/// Where a download goes: a file the client named, or a folder in which hauld names the file from the first response
/// (``FileNameChoice``).
package enum DownloadDestination: Equatable, Sendable {
    case file(LocalPath)
    case folder(LocalPath)

    /// `text` as a client gives it: a path ending in `/` or naming an existing folder is a folder; `""` is
    /// `downloadsFolder`, the user's download folder.
    package init(_ text: String, downloadsFolder: () throws(TransferRequestError) -> String)
        throws(TransferRequestError)
    {
        if text.isEmpty {
            self = .folder(try LocalPath(folder: try downloadsFolder()))
        } else if text.hasSuffix("/") || Self.isFolder(text) {
            self = .folder(try LocalPath(folder: text))
        } else {
            self = .file(try LocalPath(text))
        }
    }

    package var path: LocalPath {
        switch self {
        case .file(let path), .folder(let path): path
        }
    }

    package var isFolder: Bool {
        if case .folder = self { true } else { false }
    }

    /// The path of the file `name` in `folder`.
    package static func file(named name: String, in folder: String) -> String {
        (folder.hasSuffix("/") ? folder : folder + "/") + name
    }

    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return !path.utf8.contains(0) && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
