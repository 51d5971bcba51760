package import DBusKit
package import HaulContract

/// KDE's job progress protocol, as Plasma's notification manager serves it (plasma-workspace
/// `libnotificationmanager/dbus/org.kde.JobViewServerV2.xml` and `org.kde.JobViewV3.xml`) and as KDE's own
/// `KUiServerV2JobTracker` (kjobwidgets) speaks it:
///
/// - `org.kde.JobViewServerV2.requestView(s desktopEntry, i capabilities, a{sv} hints) → o trackerPath`
///   on `org.kde.JobViewServer` at `/JobViewServer`;
/// - on the returned path, `org.kde.JobViewV3.update(a{sv} properties)` and
///   `org.kde.JobViewV3.terminate(u errorCode, s errorMessage, a{sv} hints)`, both `NoReply`;
/// - signals from the same path: `suspendRequested()`, `resumeRequested()`, `cancelRequested()` and
///   `updateRequested()` (send every property again).
package enum KDEJobView {
    package static let serverName = "org.kde.JobViewServer"
    package static let serverPath: ObjectPath = "/JobViewServer"
    package static let serverInterface = "org.kde.JobViewServerV2"
    package static let viewInterface = "org.kde.JobViewV3"

    /// The `desktopEntry` argument. Haul installs no .desktop file, so Plasma takes the name and icon from the
    /// `application-display-name` and `application-icon-name` hints instead.
    package static let desktopEntry = "haul"
    package static let applicationName = "Haul"
    package static let iconName = HaulIcon.idle.name

    /// A task's `desktopEntry`: the application that asked for it (its `Application`), else Haul.
    package static func entry(for task: TaskSnapshot) -> String {
        task.application.isEmpty ? desktopEntry : task.application
    }

    /// The name shown for the application a task came from: the last part of a reverse-DNS desktop-file id
    /// (`org.mozilla.firefox` is `firefox`), the id itself otherwise (`chromium`), Haul's name when unknown.
    package static func shownName(for task: TaskSnapshot) -> String {
        guard let last = task.application.split(separator: ".").last else { return applicationName }
        return task.application.contains(".") ? String(last) : task.application
    }

    /// `KJob::Capability`: the bits of `requestView`'s `capabilities`.
    package enum Capability {
        package static let killable: Int32 = 0x0001
        package static let suspendable: Int32 = 0x0002
    }

    /// `terminate`'s `errorCode`: 0 for success, else a `KIO::Error` (kio `src/core/global.h`). Plasma removes a
    /// job ended with `userCanceled` silently and shows any other code as a failure with the message.
    package enum ErrorCode {
        package static let none: UInt32 = 0
        /// `KIO::ERR_USER_CANCELED` = `KJob::KilledJobError`.
        package static let userCanceled: UInt32 = 1
        // `KJob::UserDefinedError` (100) + n:
        package static let doesNotExist: UInt32 = 111
        package static let fileAlreadyExists: UInt32 = 112
        package static let accessDenied: UInt32 = 115
        package static let writeAccessDenied: UInt32 = 116
        package static let cannotConnect: UInt32 = 123
        package static let aborted: UInt32 = 147
        package static let serverTimeout: UInt32 = 149
        package static let diskFull: UInt32 = 161
        /// `ERR_WORKER_DEFINED`: "the error text is the whole message", as Haul's messages are.
        package static let workerDefined: UInt32 = 163
    }

    /// The signals a view sends.
    enum Request: String {
        case suspend = "suspendRequested"
        case resume = "resumeRequested"
        case cancel = "cancelRequested"
        /// Send every property again.
        case update = "updateRequested"

        /// The `org.haul.Haul1.Task` method the request asks for; nil for `updateRequested`.
        var taskMethod: TaskMethod? {
            switch self {
            case .suspend: .suspend
            case .resume: .resume
            case .cancel: .cancel
            case .update: nil
            }
        }
    }
}
