import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// D-Bus activation without systemd: a private bus whose service directory holds a copy of
/// dbus/org.haul.Haul1.service, pointed at the built hauld. The first call to org.haul.Haul1 must start the
/// daemon and get its answer. Nothing here touches the user's session bus, and every hauld the bus starts is
/// stopped before the test ends.
@Suite("D-Bus activation of hauld", .timeLimit(.minutes(3)))
struct ActivationTests {
    @Test func firstDBusSendCallStartsHauldAndIsAnswered() async throws {
        try await ActivationFixture.with { fixture in
            #expect(try await !fixture.probe.nameHasOwner(HaulBus.name), "hauld ran before the first call")

            let reply = try await Command.run(
                "dbus-send",
                [
                    "--session", "--print-reply", "--dest=\(HaulBus.name)", HaulBus.managerPath.rawValue,
                    "org.freedesktop.DBus.Properties.Get", "string:\(HaulBus.indicatorInterface)",
                    "string:\(IndicatorProperty.state.name)",
                ],
                environment: fixture.bus.environment
            )
            #expect(reply.status == 0, "dbus-send failed: \(reply.stderr)")
            let notActive = IndicatorStateName.notActive.rawValue
            #expect(reply.stdout.contains("variant       string \"\(notActive)\""), "\(reply.stdout)")

            try await fixture.expectOneActivatedHauld()
        }
    }

    @Test func firstDBusKitCallStartsHauldAndIsAnswered() async throws {
        try await ActivationFixture.with { fixture in
            #expect(try await !fixture.probe.nameHasOwner(HaulBus.name), "hauld ran before the first call")

            let client = try await DBusConnection.connect(address: fixture.bus.address)
            let state: DBusValue
            do {
                state = try await HauldCalls(client).property(.state)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
            #expect(state == .state(.notActive))

            try await fixture.expectOneActivatedHauld()
        }
    }

    @Test func activationFileCopyRunsTheBuiltHauldWithoutSystemd() throws {
        let fixture = try ActivationFixture.ServiceFile(stateDirectory: URL(fileURLWithPath: "/state"))
        #expect(fixture.text.contains("\nName=\(HaulBus.name)\n"))
        #expect(fixture.text.contains("\nExec=/usr/bin/env XDG_STATE_HOME=/state \(Command.built("hauld"))\n"))
        #expect(!fixture.text.contains("SystemdService="))
    }
}

/// A private bus with hauld's activation file in its service directory, and the cleanup around one test.
private struct ActivationFixture {
    let directory: URL
    let stateDirectory: URL
    let bus: PrivateBus
    /// A connection of the test's own, for questions to the bus itself.
    let probe: DBusConnection

    /// The repository's activation file, made to start the built hauld with its state in a temporary folder.
    struct ServiceFile {
        let text: String

        init(stateDirectory: URL) throws {
            let original = try String(
                contentsOf: repositoryRoot.appendingPathComponent("dbus/\(HaulBus.name).service"), encoding: .utf8
            )
            let lines = original.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.contains("Exec=/usr/local/bin/hauld"))
            #expect(lines.contains("SystemdService=hauld.service"))
            text = lines.compactMap { line -> String? in
                if line.hasPrefix("Exec=") {
                    return "Exec=/usr/bin/env XDG_STATE_HOME=\(stateDirectory.path) \(Command.built("hauld"))"
                }
                // With SystemdService=, dbus-daemon would ask systemd to start hauld; there is no systemd here.
                if line.hasPrefix("SystemdService=") { return nil }
                return String(line)
            }.joined(separator: "\n")
        }
    }

    static func with(_ body: (ActivationFixture) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-activation-\(UUID().uuidString)")
        let services = directory.appendingPathComponent("services")
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try ServiceFile(stateDirectory: state).text
            .write(to: services.appendingPathComponent("\(HaulBus.name).service"), atomically: true, encoding: .utf8)

        let bus = try await PrivateBus(serviceDirectory: services)
        defer { bus.stop() }
        let probe = try await DBusConnection.connect(address: bus.address)
        let fixture = ActivationFixture(directory: directory, stateDirectory: state, bus: bus, probe: probe)
        do {
            try await body(fixture)
        } catch {
            await probe.close()
            await fixture.stopActivatedDaemons()
            throw error
        }
        await probe.close()
        let leftovers = await fixture.stopActivatedDaemons()
        #expect(leftovers.isEmpty, "hauld processes still ran after SIGTERM and SIGKILL: \(leftovers)")
    }

    /// The bus started exactly one hauld: the built one, on this bus, with its state in the temporary folder.
    func expectOneActivatedHauld() async throws {
        let reply = try await probe.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", [.string(HaulBus.name)]
        )
        let pid = try #require(reply.first?.uint32Value).asPID
        #expect(activatedPIDs() == [pid], "the owner of \(HaulBus.name) is not the one hauld this bus started")

        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(
            URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: Command.built("hauld")).resolvingSymlinksInPath().path
        )
        // The activated daemon talks to this private bus, never to a session bus of the environment.
        let environment = Self.environment(of: pid)
        #expect(environment["DBUS_SESSION_BUS_ADDRESS"] == bus.address)
        #expect(environment["DBUS_STARTER_BUS_TYPE"] == "session")
    }

    /// hauld processes that this fixture's activation file started: the only ones whose XDG_STATE_HOME is
    /// this test's temporary folder.
    func activatedPIDs() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter {
            Self.environment(of: $0)["XDG_STATE_HOME"] == stateDirectory.path
        }.sorted()
    }

    /// SIGTERM, up to 10 s for a clean exit, then SIGKILL. Returns what still runs after all that.
    @discardableResult
    func stopActivatedDaemons() async -> [pid_t] {
        let pids = activatedPIDs()
        for pid in pids { kill(pid, SIGTERM) }
        try? await waitUntil("the activated daemons to exit", timeout: .seconds(10)) {
            !pids.contains(where: Self.isRunning)
        }
        for pid in pids where Self.isRunning(pid) { kill(pid, SIGKILL) }
        try? await Task.sleep(for: .milliseconds(100))
        return pids.filter(Self.isRunning)
    }

    /// Alive and not a zombie waiting for dbus-daemon to reap it.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state != "Z" && state != "X"
    }

    static func environment(of pid: pid_t) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return [:] }
        var result: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return result
    }
}

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

extension UInt32 {
    fileprivate var asPID: pid_t { pid_t(bitPattern: self) }
}
