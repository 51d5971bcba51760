package import DBusKit
package import HaulContract

/// The tray icon's tooltip: a title and a line summing up the running transfers, such as
/// "2 transfers: debian.iso 42%, photos.tar 7%; 3 queued, waiting for the network".
package struct TrayToolTip: Sendable, Equatable {
    package var title: String
    package var subTitle: String

    /// Beyond this many, the rest are only counted.
    static let namedTransfers = 3

    /// The tooltip of `tasks`, in any order, read once without copying them: the running ones are named by id (only
    /// they are sorted, as a thousand queued tasks would be each second).
    package init(tasks: some Sequence<TaskSnapshot>) {
        title = KDEJobView.applicationName
        var running: [TaskSnapshot] = []
        var suspended = 0
        var queued = 0
        /// The queued tasks' reasons, up to two: with two or more, none is named.
        var reasons: Set<String> = []
        for task in tasks {
            if task.isRunning { running.append(task) }
            if task.isSuspended { suspended += 1 }
            if task.state == .queued {
                queued += 1
                if reasons.count < 2 { reasons.insert(WaitingReason.phrase(for: task) ?? "") }
            }
        }
        running.sort { $0.id < $1.id }
        var parts: [String] = []
        if !running.isEmpty {
            let named = running.prefix(Self.namedTransfers).map { task in
                let name = Markup.escaped(task.fileName)  // tooltips may be rendered as markup
                return task.percent.map { "\(name) \($0)%" } ?? name
            }
            let more = running.count > named.count ? ", and \(running.count - named.count) more" : ""
            let count = running.count == 1 ? "1 transfer" : "\(running.count) transfers"
            parts.append("\(count): \(named.joined(separator: ", "))\(more)")
        }
        if queued > 0 {
            // Their reason when they share one; several reasons would not fit a tooltip's line.
            let reason = reasons.count == 1 ? reasons.first.flatMap { $0.isEmpty ? nil : ", \($0)" } ?? "" : ""
            parts.append("\(queued) queued\(reason)")
        }
        if suspended > 0 { parts.append("\(suspended) suspended") }
        subTitle = parts.isEmpty ? "No transfers running" : parts.joined(separator: "; ")
    }

    /// The `ToolTip` property, `(sa(iiay)ss)`: icon name, icon pixmaps (none), title, text.
    package var value: DBusValue {
        .structure([
            .string(StatusNotifierItem.iconName),
            .array(StatusNotifierItem.pixmap, []),
            .string(title),
            .string(subTitle),
        ])
    }
}
