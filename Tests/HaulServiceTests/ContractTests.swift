import DBusKit
import Foundation
import HaulCore
import HaulService
import HaulTestSupport
import Testing

/// dbus/org.haul.Haul1.xml is the documented contract; hauld must export exactly what it says.
@Suite(.timeLimit(.minutes(2))) struct ContractTests {
    static let contractFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dbus/org.haul.Haul1.xml")

    static func contract() throws -> [String: [String]] {
        try IntrospectionMembers.parse(String(contentsOf: contractFile, encoding: .utf8))
    }

    @Test func theContractFileDescribesTheThreeInterfaces() throws {
        #expect(try Self.contract().keys.sorted() == [
            "org.haul.Haul1.ActivityIndicator", "org.haul.Haul1.Manager", "org.haul.Haul1.Task",
        ])
    }

    @Test func hauldExportsExactlyTheDocumentedManagerAndIndicator() async throws {
        let contract = try Self.contract()
        try await DaemonFixture.with { fixture throws in
            let xml = try await fixture.client.call(
                destination: DaemonFixture.name, path: DaemonFixture.manager,
                interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"
            ).first?.stringValue ?? ""
            let exported = try IntrospectionMembers.parse(xml)
            for interface in ["org.haul.Haul1.Manager", "org.haul.Haul1.ActivityIndicator"] {
                #expect(exported[interface] == contract[interface], "\(interface) differs from the contract")
            }
            #expect(exported["org.freedesktop.DBus.Properties"] != nil)
        }
    }

    @Test(arguments: TransferErrorKind.allCases)
    func everyTransferFailureIsAContractError(_ kind: TransferErrorKind) {
        #expect(HaulErrorName(rawValue: kind.rawValue) != nil, "\(kind) has no org.haul.Haul1.Error name")
        #expect(HaulErrorName(kind).rawValue == kind.rawValue)
    }

    @Test func theTaskInterfaceDescriptionMatchesTheContract() throws {
        // No task objects exist until transfers land, so the Swift description is checked directly,
        // through the same XML that introspection would produce.
        let members = try IntrospectionMembers.parse(Self.xml(for: HaulInterfaces.task))
        #expect(members["org.haul.Haul1.Task"] == (try Self.contract())["org.haul.Haul1.Task"])
    }

    @Test func theRootIsAnObjectManagerListingTheManager() async throws {
        try await DaemonFixture.with { fixture throws in
            let reply = try await fixture.client.call(
                destination: DaemonFixture.name, path: "/org/haul/Haul1",
                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"
            )
            guard case .dictionary(_, _, let entries)? = reply.first else {
                Issue.record("GetManagedObjects returned \(reply)")
                return
            }
            #expect(entries.map(\.key) == [.objectPath(DaemonFixture.manager)])
        }
    }

    /// A minimal introspection document for one interface description.
    static func xml(for interface: DBusInterfaceDescription) -> String {
        var lines = ["<node>", "<interface name=\"\(interface.name)\">"]
        for method in interface.methods {
            lines.append("<method name=\"\(method.name)\">")
            lines += method.inputs.map { "<arg name=\"\($0.name)\" type=\"\($0.type.signature)\" direction=\"in\"/>" }
            lines += method.outputs.map { "<arg name=\"\($0.name)\" type=\"\($0.type.signature)\" direction=\"out\"/>" }
            lines.append("</method>")
        }
        for signal in interface.signals {
            lines.append("<signal name=\"\(signal.name)\">")
            lines += signal.arguments.map { "<arg name=\"\($0.name)\" type=\"\($0.type.signature)\"/>" }
            lines.append("</signal>")
        }
        for property in interface.properties {
            lines.append("<property name=\"\(property.name)\" type=\"\(property.type.signature)\" access=\"\(property.access.rawValue)\"/>")
        }
        return (lines + ["</interface>", "</node>"]).joined(separator: "\n")
    }
}
