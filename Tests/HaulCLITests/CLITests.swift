import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `haul` run as a user would, against hauld on a private bus.
@Suite(.timeLimit(.minutes(2))) struct CLITests {
    func haul(_ fixture: DaemonFixture, _ arguments: [String]) async throws -> CommandResult {
        try await Command.run(Command.built("haul"), arguments, environment: fixture.bus.environment)
    }

    func json(_ text: Substring) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    @Test func statusShowsTheIndicator() async throws {
        try await DaemonFixture.with { fixture throws in
            let human = try await haul(fixture, ["status"])
            #expect(human.status == 0)
            #expect(human.stdout.contains("Indicator:  hidden (not-active)"))
            let result = try await haul(fixture, ["status", "--json"])
            let object = try json(Substring(result.stdout))
            #expect(object["state"] as? String == IndicatorStateName.notActive.rawValue)
            #expect(object["visible"] as? Bool == false)
            #expect(object["activity_count"] as? Int == 0)
            #expect(object["activation_delay"] as? Double == 1.0)
        }
    }

    @Test func indicatorChangesSettings() async throws {
        try await DaemonFixture.with { fixture throws in
            let result = try await haul(fixture, ["indicator", "--disable", "--activation-delay", "0.4", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try json(Substring(result.stdout))
            #expect(object["enabled"] as? Bool == false)
            #expect(object["activation_delay"] as? Double == 0.4)
            #expect(try await fixture.indicatorProperty(.enabled) == .boolean(false))

            let invalid = try await haul(fixture, ["indicator", "--completion-delay=-2"])
            #expect(invalid.status == 64)
            let both = try await haul(fixture, ["indicator", "--enable", "--disable"])
            #expect(both.status == 64)
        }
    }

    @Test func busyHoldsWhileTheCommandRunsAndPassesItsStatus() async throws {
        try await DaemonFixture.with { fixture throws in
            // The command runs until the test lets it go, so the hold is observed whatever the machine's load.
            let marker = fixture.bus.directory.appendingPathComponent("ran").path
            let release = fixture.bus.directory.appendingPathComponent("release").path
            let busy = try Command.start(
                Command.built("haul"),
                ["busy", "--", "sh", "-c", "touch \(marker); while [ ! -e \(release) ]; do sleep 0.05; done; exit 7"],
                environment: fixture.bus.environment
            )
            try await waitUntil("haul busy's hold", timeout: .seconds(20)) {
                try await fixture.indicatorProperty(.activityCount) == .uint32(1)
            }
            #expect(FileManager.default.createFile(atPath: release, contents: nil))
            let result = await Command.finish(busy)
            #expect(result.status == 7)
            #expect(FileManager.default.fileExists(atPath: marker))
            try await waitUntil("the hold's release") {
                try await fixture.indicatorProperty(.activityCount) == .uint32(0)
            }
        }
    }

    @Test func aKilledBusyReleasesItsHold() async throws {
        try await DaemonFixture.with { fixture throws in
            // The command outlives haul busy: it leaves our pipes and records its pid so it can be reaped.
            let pidFile = fixture.bus.directory.appendingPathComponent("child.pid").path
            let busy = try Command.start(
                Command.built("haul"), ["busy", "--", "sh", "-c", "echo $$ > \(pidFile); exec sleep 30 >/dev/null 2>&1"],
                environment: fixture.bus.environment
            )
            defer {
                if let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                    kill(pid, SIGKILL)
                }
            }
            try await waitUntil("haul busy's hold") {
                try await fixture.indicatorProperty(.activityCount) == .uint32(1)
            }
            kill(busy.pid, SIGKILL)
            _ = await Command.finish(busy)
            try await waitUntil("the killed haul busy's hold to go", timeout: .seconds(10)) {
                try await fixture.indicatorProperty(.activityCount) == .uint32(0)
            }
        }
    }

    @Test func busyReportsACommandThatCannotRun() async throws {
        try await DaemonFixture.with { fixture throws in
            let result = try await haul(fixture, ["busy", "--", "/nonexistent/program"])
            #expect(result.status == 127)
            #expect(result.stderr.contains("cannot run /nonexistent/program"))
        }
    }

    @Test(arguments: ["--json", "--waybar"])
    func monitorPrintsOneParsableLinePerChange(_ format: String) async throws {
        try await DaemonFixture.with { fixture throws in
            try await fixture.setIndicator(.activationDelay, .double(0.1))
            try await fixture.setIndicator(.completionDelay, .double(0.1))
            let monitor = try CommandWithOutputFile.start(
                Command.built("haul"), ["monitor", format], environment: fixture.bus.environment,
                output: fixture.bus.directory.appendingPathComponent("monitor.out")
            )
            // The first line is printed once monitor is subscribed.
            try await monitor.waitForLines(1)
            try await fixture.callIndicator(.incrementActivityCount)
            try await waitUntil("the indicator to show") {
                try await fixture.indicatorProperty(.visible) == .boolean(true)
            }
            try await fixture.callIndicator(.decrementActivityCount)
            try await waitUntil("the indicator to go idle") {
                try await fixture.indicatorProperty(.state) == .state(.notActive)
            }
            // The last change printed is the return to idle.
            let idle = format == "--waybar" ? #""alt":"idle""# : #""state":"\#(IndicatorStateName.notActive.rawValue)""#
            try await monitor.waitForOutput("four lines, the last idle") {
                $0.count >= 4 && $0.last?.contains(idle) == true
            }
            kill(monitor.running.pid, SIGTERM)
            _ = await Command.finish(monitor.running)
            let output = monitor.lines.joined(separator: "\n")
            let lines = try monitor.lines.map(json)
            #expect(lines.count >= 4, "\(output)")
            if format == "--waybar" {
                #expect(lines.allSatisfy { Set($0.keys) == ["text", "alt", "class", "tooltip"] })
                #expect(lines.first?["alt"] as? String == "idle")
                #expect(lines.contains { $0["alt"] as? String == "busy" && $0["text"] as? String == "⇅ 1" })
                #expect(lines.last?["alt"] as? String == "idle")
            } else {
                let states = lines.compactMap { $0["state"] as? String }
                #expect(states.first == IndicatorStateName.notActive.rawValue)
                #expect(Set(states) == Set(IndicatorStateName.allCases.map(\.rawValue)))
                #expect(states.last == IndicatorStateName.notActive.rawValue)
            }
        }
    }

    @Test func anUnreachableDaemonIsReportedWithExitStatus69() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let result = try await Command.run(Command.built("haul"), ["status"], environment: bus.environment)
        #expect(result.status == 69)
        #expect(result.stderr.contains("hauld is not running"))
        var noBus = ProcessInfo.processInfo.environment
        noBus["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
        let withoutBus = try await Command.run(Command.built("haul"), ["status"], environment: noBus)
        #expect(withoutBus.status == 69)
        #expect(withoutBus.stderr.contains("cannot connect to the session bus"))
    }
}
