/// When the tray icon's tooltip, which follows progress, is worked out again: at most once per ``interval``, not on
/// every progress signal, and sent only when it changed; and only while a StatusNotifierWatcher is there. Without one
/// no panel shows the icon, and following progress would wake hauld every second for nothing (on a desktop with no
/// tray, as GNOME's by default); the tooltip is brought up to date when a watcher comes, before the icon registers.
/// A pure state machine: the owner arms the timer it asks for and reports when it fires.
struct TrayToolTipSchedule: Sendable {
    typealias Instant = ContinuousClock.Instant

    static let interval: Duration = .seconds(1)

    /// What the tray icon shows.
    private(set) var shown: TrayToolTip
    private var checked: Instant?
    private var timerArmed = false
    private var watched = false

    init(shown: TrayToolTip) {
        self.shown = shown
    }

    /// The transfers changed: the tooltip is checked now if the last check was an interval ago or more, else when
    /// that interval is over.
    mutating func transfersChanged(now: Instant, current: () -> TrayToolTip) -> [DesktopEffect] {
        guard watched, !timerArmed else { return [] }
        let due = checked.map { $0 + Self.interval } ?? now
        guard due > now else { return check(now: now, current: current) }
        timerArmed = true
        return [.armToolTipTimer(at: due)]
    }

    /// The timer armed by ``transfersChanged(now:current:)`` fired.
    mutating func timerFired(now: Instant, current: () -> TrayToolTip) -> [DesktopEffect] {
        guard timerArmed else { return [] }
        timerArmed = false
        return watched ? check(now: now, current: current) : []
    }

    /// A StatusNotifierWatcher came (`present`) or went. One that comes gets the tooltip as it is now; one that finds
    /// it unchanged leaves the schedule as it was.
    mutating func watcherChanged(present: Bool, now: Instant, current: () -> TrayToolTip) -> [DesktopEffect] {
        watched = present
        guard present else { return [] }
        let toolTip = current()
        return toolTip != shown ? check(now: now) { toolTip } : []
    }

    private mutating func check(now: Instant, current: () -> TrayToolTip) -> [DesktopEffect] {
        checked = now
        let toolTip = current()
        guard toolTip != shown else { return [] }
        shown = toolTip
        return [.setTrayToolTip(toolTip)]
    }
}
