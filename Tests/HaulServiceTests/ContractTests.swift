import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `dbus/org.haul.Haul1.xml` is the documented contract. The contract target describes the same members, DBusKit's
/// introspection writer turns that description into the same XML, and a running hauld exports exactly that, member
/// by member.
@Suite(.timeLimit(.minutes(2))) struct ContractTests {
    static let interfaces = [HaulBus.managerInterface, HaulBus.indicatorInterface, HaulBus.taskInterface]

    @Test func theContractFileDescribesTheThreeInterfaces() throws {
        #expect(try ContractDocument().members().keys.sorted() == Self.interfaces.sorted())
        #expect(HaulInterfaces.all.map(\.name) == Self.interfaces)
    }

    /// What hauld introspects comes from `HaulInterfaces` through DBusKit's writer: written here without a bus, it
    /// must say what the document says.
    @Test(arguments: interfaces)
    func theProductionWriterWritesTheDocumentedInterface(_ name: String) throws {
        let interface = try #require(HaulInterfaces.all.first { $0.name == name })
        let written = try IntrospectionMembers.parse(IntrospectionXML.node(interfaces: [interface], children: []))
        Self.expectSameMembers(written[name] ?? [], try ContractDocument().members()[name] ?? [], name)
    }

    @Test func hauldExportsExactlyTheDocumentedInterfaces() async throws {
        let contract = try ContractDocument().members()
        try await DaemonFixture.with { fixture throws in
            let task = try await fixture.calls.download(
                "http://127.0.0.1:1/f", to: fixture.bus.directory.appendingPathComponent("f").path,
                options: [.startSuspended: .boolean(true)]
            )
            var exported: [String: [String]] = [:]
            for path in [HaulBus.managerPath, task] {
                let xml = try await fixture.client.call(
                    destination: HaulBus.name, path: path, interface: "org.freedesktop.DBus.Introspectable",
                    member: "Introspect"
                ).first?.stringValue ?? ""
                exported.merge(try IntrospectionMembers.parse(xml)) { $1 }
            }
            for interface in Self.interfaces {
                Self.expectSameMembers(exported[interface] ?? [], contract[interface] ?? [], interface)
            }
            #expect(exported["org.freedesktop.DBus.Properties"] != nil)
        }
    }

    @Test func theRootIsAnObjectManagerListingTheManager() async throws {
        try await DaemonFixture.with { fixture throws in
            let entries = try await fixture.calls.managedObjects()
            #expect(entries.map(\.key) == [.objectPath(HaulBus.managerPath)])
        }
    }

    /// One expectation per member that is missing or extra, so that a failure names the member.
    static func expectSameMembers(
        _ actual: [String], _ documented: [String], _ context: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!documented.isEmpty, "no documented members \(context)", sourceLocation: sourceLocation)
        for member in documented where !actual.contains(member) {
            Issue.record("missing \(context): \(member)", sourceLocation: sourceLocation)
        }
        for member in actual where !documented.contains(member) {
            Issue.record("not in the contract \(context): \(member)", sourceLocation: sourceLocation)
        }
    }
}
