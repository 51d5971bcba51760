import DBusKit
import FoundationEssentials
import HaulContract
import HaulCore
import Logging

/// Downloads into a folder: the file is named at the first response, never onto a file or another unfinished task's
/// name, and the name is on the bus and on disk before any byte is written.
extension TaskService {
    /// Refuses what can be known before a download starts: for a file, an existing one (unless `overwrite`) or one
    /// another unfinished task writes; for both, a folder that is missing or not writable.
    func checkDestination(_ destination: DownloadDestination, overwrite: Bool) throws(DBusError) {
        try HaulErrorName.mapping { () throws(TransferFailure) in
            switch destination {
            case .file(let path): try LocalFileChecks.destination(path, overwrite: overwrite)
            case .folder(let path): try LocalFileChecks.folder(path.path)
            }
        }
        guard case .file(let path) = destination else { return }
        if holdsUnfinishedTask(at: path.path) {
            throw HaulErrorName.fileExists.error("another task is already downloading to \(path.path)")
        }
    }

    /// Whether a task other than `other` that has not completed names `path`.
    func holdsUnfinishedTask(at path: String, other: UInt32? = nil) -> Bool {
        paths[path].contains { $0 != other && tasks[$0]?.record.state != .completed }
    }

    /// Names the file of task `id` from its first response; returns its path once `Path` says it and the record is
    /// saved. Calls are taken one at a time on the actor, so two tasks naming at once get two names.
    func nameFile(_ id: UInt32, contentDisposition: String?, finalURL: URL) async -> Result<String, TransferFailure> {
        guard var task = tasks[id] else { return .failure(.cancelled) }
        guard task.record.awaitsName else { return .success(task.record.path) }
        let folder = task.record.path
        let suggested = FileNameChoice.name(
            contentDisposition: contentDisposition, hint: task.record.filenameHint, finalURL: finalURL
        )
        let name = FileNameChoice.available(suggested) { name in
            let path = DownloadDestination.file(named: name, in: folder)
            return holdsUnfinishedTask(at: path, other: id) || LocalFileChecks.isTaken(path)
        }
        guard let name else {
            let message = "no free name like \(suggested) in \(folder)"
            return .failure(TransferFailure(kind: .fileExists, message: message, isTransient: false))
        }
        let path = DownloadDestination.file(named: name, in: folder)
        paths.remove(id, at: folder)
        paths.insert(id, at: path)
        task.record.path = path
        task.record.awaitsName = false
        tasks[id] = task
        persist(id)
        publish(id, TaskProperty.values([.path: .string(path.busSafe)]))
        logger.info("task \(id) saves into \(path)")
        // A restart from here on must find the name the partial file has.
        await records.flush()
        await settled()
        return .success(path)
    }
}
