package import DBusKit

/// Whether power-profiles-daemon's active profile is `power-saver`, on the system bus: `ActiveProfile` of
/// `org.freedesktop.UPower.PowerProfiles` (on `/org/freedesktop/UPower/PowerProfiles`), or of its older name
/// `net.hadess.PowerProfiles` (on `/net/hadess/PowerProfiles`) when only that one is there; its changes, and either
/// name coming and going.
///
/// ```swift
/// let monitor = PowerProfileMonitor(connection: systemBus)
/// async let following: Void = monitor.run()
/// for await powerSaver in monitor.powerSaver { … }
/// ```
package final class PowerProfileMonitor: Sendable {
    /// The first value once `run()` has looked for both names, then every change. Ends with `false` (unless that was
    /// the last) when `run()` returns.
    package let powerSaver: AsyncStream<Bool>
    private let continuation: AsyncStream<Bool>.Continuation
    /// The current name first: its profile counts whenever it is on the bus.
    private let followers: [PropertyFollower]

    package init(connection: DBusConnection) {
        followers = [
            PropertyFollower(
                connection: connection, name: "org.freedesktop.UPower.PowerProfiles",
                path: "/org/freedesktop/UPower/PowerProfiles", interface: "org.freedesktop.UPower.PowerProfiles"
            ),
            PropertyFollower(
                connection: connection, name: "net.hadess.PowerProfiles", path: "/net/hadess/PowerProfiles",
                interface: "net.hadess.PowerProfiles"
            ),
        ]
        (powerSaver, continuation) = AsyncStream.makeStream(of: Bool.self)
    }

    /// What one of the followers reports.
    private enum Report {
        case properties(index: Int, [String: DBusValue]?)
        case ended
    }

    /// Follows both names until the task is cancelled or the connection closes. Call it once.
    package func run() async {
        let (reports, sink) = AsyncStream.makeStream(of: Report.self)
        var last: Bool?
        await withTaskGroup(of: Void.self) { group in
            for (index, follower) in followers.enumerated() {
                group.addTask {
                    try? await follower.run { sink.yield(.properties(index: index, $0)) }
                    sink.yield(.ended)
                }
            }
            var services = [[String: DBusValue]?](repeating: nil, count: followers.count)
            var reported = Set<Int>()
            for await report in reports {
                // A follower ends when the connection closes or the task is cancelled: the other one as well.
                guard case .properties(let index, let properties) = report else { break }
                services[index] = properties
                reported.insert(index)
                // Only once every name has been looked for: otherwise the first could speak for a moment alone.
                guard reported.count == followers.count else { continue }
                let value = Self.isPowerSaver(services)
                if value != last {
                    last = value
                    continuation.yield(value)
                }
            }
            group.cancelAll()
        }
        if last != false { continuation.yield(false) }
        continuation.finish()
    }

    /// Whether the profile of the first service on the bus (nil: not on it) is `power-saver`; a missing
    /// `ActiveProfile`, or one that is no string, is not.
    package static func isPowerSaver(_ services: [[String: DBusValue]?]) -> Bool {
        services.lazy.compactMap { $0 }.first?["ActiveProfile"]?.stringValue == "power-saver"
    }
}
