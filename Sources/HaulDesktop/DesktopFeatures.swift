/// Which panels the desktop bridge serves: KDE job views, the tray icon and notifications unless turned off (the
/// notifications by default for the transfers no job view shows: ``NotificationMode``).
package struct DesktopFeatures: Sendable, Equatable {
    package var jobViews: Bool
    package var statusNotifier: Bool
    package var notifications: NotificationMode

    package init(
        jobViews: Bool = true, statusNotifier: Bool = true, notifications: NotificationMode = .unlessShownAsJob
    ) {
        self.jobViews = jobViews
        self.statusNotifier = statusNotifier
        self.notifications = notifications
    }

    package var isEmpty: Bool { !jobViews && !statusNotifier && notifications == .off }

    /// hauld's flags, else its environment (`HAULD_JOB_VIEW`, `HAULD_STATUS_NOTIFIER`, `HAULD_NOTIFY`, each 1/0,
    /// true/false, yes/no or on/off; `HAULD_NOTIFY` also `auto`, the default), else the defaults. `--notify` and
    /// `HAULD_NOTIFY=1` announce every transfer, a job view's too; `--no-notify` and `HAULD_NOTIFY=0` none. A value
    /// that is none of those is ignored and reported: a panel setting is no reason for the daemon not to start.
    package static func resolve(
        noJobView: Bool, noStatusNotifier: Bool, notify: Bool, noNotify: Bool = false, environment: [String: String]
    ) -> (features: DesktopFeatures, problems: [String]) {
        var problems: [String] = []
        func setting(_ name: String, orAuto: Bool = false) -> Bool? {
            guard let text = environment[name] else { return nil }
            switch text.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            case "auto" where orAuto: return nil
            default:
                let auto = orAuto ? " or auto" : ""
                problems.append("ignoring \(name)=\(text): it must be 1 or 0 (true/false, yes/no, on/off)\(auto)")
                return nil
            }
        }
        let notifyEvery: Bool? = noNotify ? false : notify ? true : setting("HAULD_NOTIFY", orAuto: true)
        let notifications: NotificationMode =
            switch notifyEvery {
            case true?: .always
            case false?: .off
            case nil: .unlessShownAsJob
            }
        let features = DesktopFeatures(
            jobViews: !noJobView && setting("HAULD_JOB_VIEW") != false,
            statusNotifier: !noStatusNotifier && setting("HAULD_STATUS_NOTIFIER") != false,
            notifications: notifications
        )
        return (features, problems)
    }
}
