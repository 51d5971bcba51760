/// Which transfers the desktop bridge announces with a notification when they end.
package enum NotificationMode: Sendable, Equatable {
    /// None.
    case off
    /// Those that no KDE job view showed: Plasma shows a job's ending itself, a finished download with "Open" and
    /// "Open Containing Folder", a failed one with the reason, and a notification would say it twice. Everywhere
    /// else (GNOME, Xfce, a Plasma with the job view turned off) every ending.
    case unlessShownAsJob
    /// Every one, even those a job view shows (for "Retry" in Plasma).
    case always
}
