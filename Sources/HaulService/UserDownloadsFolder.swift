import Glibc
import HaulCore
import HaulDesktop

/// The folder of a download whose destination is `""`: the user's download folder, as "Open downloads folder" finds
/// it (`DownloadsFolder`), made with mode 0700 (and any missing folder above it) when it is not there yet.
enum UserDownloadsFolder {
    static func resolve() throws(TransferRequestError) -> String {
        let folder = DownloadsFolder.current()
        guard folder.hasPrefix("/"), !folder.utf8.contains(0) else {
            throw .invalidArgument("the user's download folder '\(folder)' is not an absolute path")
        }
        var path = ""
        for component in folder.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o700) != 0, errno != EEXIST {
                throw .invalidArgument("cannot create the download folder \(path): \(String(cString: strerror(errno)))")
            }
        }
        return folder
    }
}
