extension DesktopBridge {
    /// Which panels to serve: KDE job views and the tray icon unless turned off, notifications only when asked for.
    package struct Features: Sendable, Equatable {
        package var jobViews: Bool
        package var statusNotifier: Bool
        package var notifications: Bool

        package init(jobViews: Bool = true, statusNotifier: Bool = true, notifications: Bool = false) {
            self.jobViews = jobViews
            self.statusNotifier = statusNotifier
            self.notifications = notifications
        }

        package var isEmpty: Bool { !jobViews && !statusNotifier && !notifications }

        /// hauld's flags, else its environment (`HAULD_JOB_VIEW`, `HAULD_STATUS_NOTIFIER`, `HAULD_NOTIFY`, each
        /// 1/0, true/false, yes/no or on/off), else the defaults. A value that is none of those is ignored and
        /// reported: a panel setting is no reason for the daemon not to start.
        package static func resolve(
            noJobView: Bool, noStatusNotifier: Bool, notify: Bool, environment: [String: String]
        ) -> (features: Features, problems: [String]) {
            var problems: [String] = []
            func setting(_ name: String, default value: Bool) -> Bool {
                guard let text = environment[name] else { return value }
                switch text.lowercased() {
                case "1", "true", "yes", "on": return true
                case "0", "false", "no", "off": return false
                default:
                    problems.append("ignoring \(name)=\(text): it must be 1 or 0 (true/false, yes/no, on/off)")
                    return value
                }
            }
            let features = Features(
                jobViews: !noJobView && setting("HAULD_JOB_VIEW", default: true),
                statusNotifier: !noStatusNotifier && setting("HAULD_STATUS_NOTIFIER", default: true),
                notifications: notify || setting("HAULD_NOTIFY", default: false)
            )
            return (features, problems)
        }
    }
}
