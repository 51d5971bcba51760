import Glibc

/// What can be known about a transfer's local file before it starts: refused with the failure the contract names
/// (`FileExists`, `NotFound`, `PermissionDenied`, `InvalidArgument`), which the service turns into its bus error.
package enum LocalFileChecks {
    package static func destination(_ destination: LocalPath, overwrite: Bool) throws(TransferFailure) {
        let path = destination.path
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) != S_IFDIR else { throw refused(.invalidArgument, "\(path) is a directory") }
            guard overwrite else { throw refused(.fileExists, "\(path) exists; ask for overwrite to replace it") }
        }
        try self.folder(destination.folder)
    }

    /// A folder a download writes into: it exists, is a folder, and may be written.
    package static func folder(_ folder: String) throws(TransferFailure) {
        var info = stat()
        guard stat(folder, &info) == 0 else { throw refused(.notFound, "the folder \(folder) does not exist") }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw refused(.invalidArgument, "\(folder) is not a folder") }
        guard access(folder, W_OK) == 0 else { throw refused(.permissionDenied, "cannot write into \(folder)") }
    }

    /// Whether a file (or a partial file) of that name is in the way of a new download's name.
    package static func isTaken(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 || lstat(path + SafeFileName.partialSuffix, &info) == 0
    }

    package static func source(_ path: String) throws(TransferFailure) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw refused(.notFound, "\(path) does not exist") }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw refused(.invalidArgument, "\(path) is not a regular file")
        }
        guard access(path, R_OK) == 0 else { throw refused(.permissionDenied, "cannot read \(path)") }
    }

    private static func refused(_ kind: TransferErrorKind, _ message: String) -> TransferFailure {
        TransferFailure(kind: kind, message: message, isTransient: false)
    }
}
