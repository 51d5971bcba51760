import DBusKit
import HaulContract
import HaulTestSupport
import Testing
@testable import HaulService

/// The Manager's `DownloadWithOptions` in-process, called as a client calls it: the task it creates carries what the
/// caller asked, and the application an unsandboxed caller (`FixedCaller`: this test's process) names; a request it
/// cannot carry out creates nothing. Who a caller is on the real bus, sandboxed or not, is `ApplicationTests`'.
@Suite(.timeLimit(.minutes(3))) struct ManagerServiceTests {
    static func downloadWithOptions(
        _ harness: TaskServiceHarness, _ url: String, _ options: [DownloadOption: DBusValue]
    ) async throws -> [DBusValue] {
        try await harness.bus.call(
            path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: ManagerMethod.downloadWithOptions.rawValue,
            [.string(url), .string(harness.file("asked.bin")), .vardict(DownloadOption.values(options))]
        )
    }

    @Test func aDownloadWithOptionsCreatesTheTaskAsAsked() async throws {
        try await TaskServiceHarness.with { harness throws in
            let options: [DownloadOption: DBusValue] = [
                .application: .string("org.example.Browser"), .startSuspended: .boolean(true),
            ]
            let reply = try await Self.downloadWithOptions(harness, "http://127.0.0.1:1/asked.bin", options)
            let path = try #require(reply.first?.objectPathValue)
            let task = { (property: TaskProperty) throws -> DBusValue in
                try harness.bus.property(path: path, interface: HaulBus.taskInterface, name: property.name)
            }
            #expect(try task(.application) == .string("org.example.Browser"))
            #expect(try task(.path) == .string(harness.file("asked.bin")))
            #expect(try task(.state) == .state(.suspended))

            do {
                _ = try await Self.downloadWithOptions(harness, "ftp://127.0.0.1:1/asked.bin", [:])
                Issue.record("an ftp URL was taken")
            } catch let error as DBusError {
                #expect(error.name == HaulErrorName.unsupportedScheme.fullName)
            }
            #expect(await harness.tasks.list() == [path])
        }
    }
}
