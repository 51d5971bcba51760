import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// systemd/hauld.service as systemd itself judges it (`systemd-analyze verify` and `security`), and the
/// promises the unit and the D-Bus activation file make to each other. systemd does not need to run for this.
@Suite("The systemd user unit", .timeLimit(.minutes(2)))
struct SystemdUnitTests {
    @Test func unitPassesSystemdAnalyzeVerify() async throws {
        try await UnitCopy.with { copy in
            let result = try await copy.analyze(["--user", "verify", copy.unit.path])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            // Other units of the machine may have complaints of their own; this one must have none.
            #expect(!(result.stdout + result.stderr).contains("hauld"), "\(result.stdout)\(result.stderr)")
        }
    }

    @Test func unitWithTheUsernsDropInPassesSystemdAnalyzeVerify() async throws {
        try await UnitCopy.with(dropIn: "userns-restricted.conf") { copy in
            let result = try await copy.analyze(["--user", "verify", copy.unit.path])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains("hauld"), "\(result.stdout)\(result.stderr)")
            // The drop-in really applies: it undoes the capability options, so the rating gets worse.
            let exposure = try await copy.overallExposure()
            #expect(exposure >= 4.0)
        }
    }

    @Test func overallExposureIsBelowFour() async throws {
        try await UnitCopy.with { copy in
            let exposure = try await copy.overallExposure()
            #expect(exposure < 4.0, "systemd-analyze security rates hauld.service \(exposure)")
        }
    }

    @Test func unitIsADBusServiceThatKeepsTheSocketsItNeeds() throws {
        let settings = try UnitCopy.settings(of: "systemd/hauld.service")
        #expect(settings["Type"] == ["dbus"])
        #expect(settings["BusName"] == [HaulBus.name])
        #expect(settings["ExecStart"] == ["/usr/local/bin/hauld"])
        #expect(settings["Restart"] == ["on-failure"])
        #expect(settings["WantedBy"] == ["default.target"])
        let families = Set((settings["RestrictAddressFamilies"] ?? []).flatMap { $0.split(separator: " ").map(String.init) })
        #expect(families == ["AF_UNIX", "AF_INET", "AF_INET6"])
        // Downloads go into the home directory: it must stay writable.
        #expect(settings["ProtectHome"] != ["yes"] && settings["ProtectHome"] != ["tmpfs"])
        #expect((settings["ReadWritePaths"] ?? []).contains { $0.split(separator: " ").contains("%h") })
        #expect(settings["PrivateNetwork"] == nil && settings["PrivateTmp"] == nil)
    }

    @Test func activationFileStartsTheSameDaemonThroughTheUnit() throws {
        let activation = try UnitCopy.settings(of: "dbus/\(HaulBus.name).service")
        let unit = try UnitCopy.settings(of: "systemd/hauld.service")
        #expect(activation["Name"] == [HaulBus.name])
        #expect(activation["SystemdService"] == ["hauld.service"])
        #expect(activation["Exec"] == unit["ExecStart"])
        #expect(activation["Name"] == unit["BusName"])
        let text = try String(
            contentsOf: repositoryRoot.appendingPathComponent("dbus/\(HaulBus.name).service"), encoding: .utf8
        )
        #expect(text.split(separator: "\n").first { !$0.hasPrefix("#") } == "[D-BUS Service]")
    }
}

/// A copy of the unit in a temporary folder, its ExecStart pointing at the built hauld (verify checks that the
/// program exists), with a private XDG_RUNTIME_DIR for `systemd-analyze --user`.
private struct UnitCopy {
    let directory: URL
    let unit: URL

    static func with(dropIn: String? = nil, _ body: (UnitCopy) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])

        let original = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/hauld.service"), encoding: .utf8)
        #expect(original.contains("\nExecStart=/usr/local/bin/hauld\n"))
        let unit = directory.appendingPathComponent("hauld.service")
        try original.replacingOccurrences(of: "\nExecStart=/usr/local/bin/hauld\n", with: "\nExecStart=\(Command.built("hauld"))\n")
            .write(to: unit, atomically: true, encoding: .utf8)
        if let dropIn {
            // Where `make install` puts it; systemd-analyze reads drop-ins beside a unit given by path.
            let folder = directory.appendingPathComponent("hauld.service.d")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try FileManager.default.copyItem(
                at: repositoryRoot.appendingPathComponent("systemd/\(dropIn)"),
                to: folder.appendingPathComponent("10-userns-restricted.conf")
            )
        }
        try await body(UnitCopy(directory: directory, unit: unit))
    }

    func analyze(_ arguments: [String]) async throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory.appendingPathComponent("runtime").path
        environment["SYSTEMD_PAGER"] = "cat"
        environment["SYSTEMD_COLORS"] = "0"
        return try await Command.run("systemd-analyze", arguments, environment: environment)
    }

    /// "→ Overall exposure level for hauld.service: 1.7 OK 🙂"
    func overallExposure() async throws -> Double {
        let result = try await analyze(["security", "--offline=true", unit.path])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for hauld.service:") },
            "no overall exposure in: \(result.stdout)\(result.stderr)"
        )
        let value = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        return try #require(value, "cannot read the exposure in '\(line)'")
    }

    /// The `Key=value` settings of a unit-style file in the repository, by key, in order (comments skipped).
    static func settings(of path: String) throws -> [String: [String]] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
        var result: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        return result
    }
}

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
