import DBusKit
import Glibc
import HaulCore

/// What can be known about a transfer's local file before it starts, answered with the contract's errors.
enum RequestChecks {
    static func destination(_ destination: LocalPath, overwrite: Bool) throws(DBusError) {
        let path = destination.path
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) != S_IFDIR else {
                throw HaulErrorName.invalidArgument.error("\(path) is a directory")
            }
            guard overwrite else {
                throw HaulErrorName.fileExists.error("\(path) exists; ask for overwrite to replace it")
            }
        }
        let folder = destination.folder
        guard stat(folder, &info) == 0 else {
            throw HaulErrorName.notFound.error("the folder \(folder) does not exist")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw HaulErrorName.invalidArgument.error("\(folder) is not a folder")
        }
        guard access(folder, W_OK) == 0 else {
            throw HaulErrorName.permissionDenied.error("cannot write into \(folder)")
        }
    }

    static func source(_ path: String) throws(DBusError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HaulErrorName.notFound.error("\(path) does not exist") }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw HaulErrorName.invalidArgument.error("\(path) is not a regular file")
        }
        guard access(path, R_OK) == 0 else { throw HaulErrorName.permissionDenied.error("cannot read \(path)") }
    }
}
