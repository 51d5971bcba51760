package import DBusKit
import FoundationEssentials
package import HaulContract

/// What KDE's job view shows of a task: the `update` properties and `terminate` arguments, with the keys and
/// types `KUiServerV2JobTracker` sends and Plasma's `JobPrivate::update` reads.
package enum JobViewHints {
    /// `requestView`'s `capabilities`: cancel and suspend/resume buttons as the task allows.
    package static func capabilities(of task: TaskSnapshot) -> Int32 {
        (task.isCancellable ? KDEJobView.Capability.killable : 0)
            | (task.isPausable ? KDEJobView.Capability.suspendable : 0)
    }

    /// `requestView`'s `hints`: the name of the application the task came from and Haul's icon (what Plasma reads from
    /// them, over what the `desktopEntry`'s desktop file says), and the task's
    /// current state as KDE's own tracker sends it (Plasma takes it from the `update` that follows).
    package static func request(for task: TaskSnapshot) -> [String: DBusValue] {
        update(for: task).merging([
            "application-display-name": .string(KDEJobView.shownName(for: task)),
            "application-icon-name": .string(KDEJobView.iconName),
        ]) { $1 }
    }

    /// Every `update` property for the task's current state.
    ///
    /// `title` s, `descriptionLabel1`/`descriptionValue1` s (source), `descriptionLabel2`/`descriptionValue2` s
    /// (destination), `totalFiles` t (1: Plasma then words it "file.iso to Downloads"), `destUrl` s (a download's
    /// folder), `processedBytes` t, `totalBytes` t and `percent` u (0 while the size is unknown, so that a total
    /// that became unknown does not stay on screen), `speed` t (bytes/s), `suspended` b, `infoMessage` s (why a queued
    /// task waits; empty otherwise, so that the message goes once the task runs).
    package static func update(for task: TaskSnapshot) -> [String: DBusValue] {
        let (source, destination) = task.isDownload ? (task.url, task.path) : (task.path, task.url)
        var hints: [String: DBusValue] = [
            "title": .string("\(task.isDownload ? "Downloading" : "Uploading") \(task.fileName)"),
            "descriptionLabel1": .string("Source"),
            "descriptionValue1": .string(source),
            "descriptionLabel2": .string("Destination"),
            "descriptionValue2": .string(destination),
            "totalFiles": .uint64(1),
            "processedBytes": .uint64(task.bytesDone),
            "speed": .uint64(task.isRunning ? task.rate : 0),
            "suspended": .boolean(task.isSuspended),
            "totalBytes": .uint64(UInt64(max(task.bytesExpected, 0))),
            "percent": .uint32(task.percent ?? 0),
            "infoMessage": .string(WaitingReason.sentence(for: task) ?? ""),
        ]
        if task.isDownload, !task.path.isEmpty {
            hints["destUrl"] = .string(URL(fileURLWithPath: task.path).deletingLastPathComponent().absoluteString)
        }
        return hints
    }

    /// Whether an `update` key only follows progress (sent at most twice a second).
    static func isProgress(_ key: String) -> Bool {
        key == "processedBytes" || key == "percent" || key == "speed"
    }

    /// `terminate`'s `errorCode` and `errorMessage` for a completed task; for one that vanished unfinished
    /// (nil), `ERR_ABORTED`.
    package static func termination(for task: TaskSnapshot?) -> (errorCode: UInt32, errorMessage: String) {
        guard let task, task.isCompleted else {
            return (KDEJobView.ErrorCode.aborted, "The transfer was removed before it finished.")
        }
        typealias Code = KDEJobView.ErrorCode
        guard !task.errorName.isEmpty else { return (Code.none, "") }
        let code: UInt32
        switch task.failure {
        case .cancelled?: code = Code.userCanceled
        case .notFound?: code = Code.doesNotExist
        case .fileExists?: code = Code.fileAlreadyExists
        case .permissionDenied?: code = task.isDownload ? Code.writeAccessDenied : Code.accessDenied
        case .network?: code = Code.cannotConnect
        case .timeout?: code = Code.serverTimeout
        case .diskFull?: code = Code.diskFull
        case .http? where task.httpStatus == 404 || task.httpStatus == 410: code = Code.doesNotExist
        default: code = Code.workerDefined
        }
        return (code, task.errorMessage.isEmpty ? task.errorKind : task.errorMessage)
    }
}
