import ArgumentParser
import DBusKit
import Foundation
import HaulContract

/// A connection to hauld for one command; turns bus failures into clear messages and exit codes.
struct HaulClient {
    let connection: DBusConnection
    var calls: HauldCalls { HauldCalls(connection) }

    static func connect() async throws -> HaulClient {
        do {
            return HaulClient(connection: try await DBusConnection.sessionBus())
        } catch {
            throw CLIFailure.unreachable("cannot connect to the session bus: \(error.message)")
        }
    }

    func indicatorStatus() async throws -> IndicatorStatus {
        let properties = try await remote {
            try await calls.indicatorProperties()
        }
        return IndicatorStatus(properties)
    }

    func managerSnapshot() async throws -> ManagerSnapshot {
        let properties = try await remote {
            try await calls.managerProperties()
        }
        return ManagerSnapshot(properties: properties)
    }

    func setManager(_ property: ManagerProperty, _ value: DBusValue) async throws {
        try await remote { try await calls.set(property, to: value) }
    }

    func setIndicator(_ property: IndicatorProperty, _ value: DBusValue) async throws {
        try await remote { try await calls.set(property, to: value) }
    }

    func callIndicator(_ method: IndicatorMethod) async throws {
        try await remote { try await calls.call(method) }
    }

    /// Runs a call to hauld, mapping "nobody there" errors to `unreachable` and the rest to `refused`.
    func remote<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw CLIFailure(error)
        }
    }
}

/// What a command failed with, and the exit status it leads to.
enum CLIFailure: Error, CustomStringConvertible {
    case unreachable(String)
    case refused(String)
    case taskFailed(String)
    case taskCancelled(String)

    static let unreachableNames: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected",
        "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        "org.freedesktop.DBus.Error.TimedOut",
    ]

    init(_ error: DBusError) {
        if Self.unreachableNames.contains(error.name) || error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn") {
            self = .unreachable(
                "hauld is not running on the session bus (\(HaulBus.name): \(error.message)). "
                    + "Start it with `hauld`, or `systemctl --user start hauld` when it is installed."
            )
        } else {
            self = .refused("\(error.message) (\(error.name))")
        }
    }

    var description: String {
        switch self {
        case .unreachable(let message), .refused(let message), .taskFailed(let message), .taskCancelled(let message):
            message
        }
    }

    var exitCode: ExitCode {
        switch self {
        case .unreachable: ExitCode(69)  // EX_UNAVAILABLE
        case .refused, .taskFailed: .failure
        case .taskCancelled: ExitCode(2)
        }
    }
}

extension AsyncParsableCommand {
    /// Runs the command's body, printing a failure as `haul: message` and exiting with its status.
    func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("haul: \(failure)\n".utf8))
            throw failure.exitCode
        }
    }
}
