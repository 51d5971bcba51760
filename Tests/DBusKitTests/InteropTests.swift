import DBusKit
import Foundation
import HaulTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The exported test object as independent D-Bus implementations see it: libdbus's `dbus-send`, GLib's `gdbus`
/// and systemd's `busctl`, each a separate process talking to the private bus.
@Suite("Interoperability with dbus-send, gdbus and busctl", .timeLimit(.minutes(3)))
struct InteropTests {
    static let service = "org.example.TestService"

    @Test func goodCallsAreAnsweredToEveryTool() async throws {
        try await BusFixture.with { fixture in
            let add = try await fixture.dbusSend(["/org/example/Test", "org.example.Test.Add", "int32:40", "int32:2"])
            #expect(add.status == 0)
            #expect(add.stdout.contains("int32 42"))

            let echo = try await fixture.dbusSend(
                ["/org/example/Test", "org.example.Test.Echo", "variant:string:héllo"]
            )
            #expect(echo.status == 0)
            #expect(echo.stdout.contains("string \"héllo\""))

            // gdbus reads the argument types from the object's introspection data; `--` lets "-7" through.
            let gdbusAdd = try await fixture.gdbusCall("/org/example/Test", "org.example.Test.Add", ["5", "--", "-7"])
            #expect(gdbusAdd.status == 0)
            #expect(gdbusAdd.stdout.trimmed == "(-2,)")

            let gdbusGet = try await fixture.gdbusCall(
                "/org/example/Test", "org.freedesktop.DBus.Properties.Get", ["org.example.Test", "Name"]
            )
            #expect(gdbusGet.stdout.trimmed == "(<'tester'>,)")

            let busctlAdd = try await fixture.busctl(
                ["call", Self.service, "/org/example/Test", "org.example.Test", "Add", "ii", "1", "2"]
            )
            #expect(busctlAdd.status == 0)
            #expect(busctlAdd.stdout.trimmed == "i 3")

            // Ping2 answers with the caller's unique name, which the bus filled in for the foreign client.
            let busctlPing = try await fixture.busctl(
                ["call", Self.service, "/org/example/Test", "org.example.Test", "Ping2"]
            )
            #expect(busctlPing.stdout.hasPrefix("s \":1."))

            let name = try await fixture.busctl(
                ["get-property", Self.service, "/org/example/Test", "org.example.Test", "Name"]
            )
            #expect(name.stdout.trimmed == "s \"tester\"")
            let limit = try await fixture.busctl(
                ["get-property", Self.service, "/org/example/Test", "org.example.Test", "Limit"]
            )
            #expect(limit.stdout.trimmed == "i 10")

            let getAll = try await fixture.dbusSend(
                ["/org/example/Test", "org.freedesktop.DBus.Properties.GetAll", "string:org.example.Test"]
            )
            #expect(getAll.status == 0)
            for expected in ["string \"Counter\"", "uint32 0", "string \"Name\"", "string \"Limit\"", "int32 10"] {
                #expect(getAll.stdout.contains(expected))
            }
        }
    }

    @Test func propertiesAreWrittenByEveryTool() async throws {
        try await BusFixture.with { fixture in
            let busctl = try await fixture.busctl(
                ["set-property", Self.service, "/org/example/Test", "org.example.Test", "Limit", "i", "25"]
            )
            #expect(busctl.status == 0, "\(busctl.stderr)")
            #expect(await fixture.limit() == .int32(25))

            let dbusSend = try await fixture.dbusSend(
                [
                    "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                    "string:Counter", "variant:uint32:7",
                ]
            )
            #expect(dbusSend.status == 0, "\(dbusSend.stderr)")

            let gdbus = try await fixture.gdbusCall(
                "/org/example/Test", "org.freedesktop.DBus.Properties.Set", ["org.example.Test", "Limit", "<int32 3>"]
            )
            #expect(gdbus.status == 0, "\(gdbus.stderr)")

            let counter = try await fixture.client.property(
                destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, name: "Counter"
            )
            let limit = try await fixture.client.property(
                destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, name: "Limit"
            )
            #expect(counter == .uint32(7))
            #expect(limit == .int32(3))
        }
    }

    /// Every bad call gets the standard error name, whichever tool sends it, and the server keeps serving.
    @Test func badCallsGetStandardErrors() async throws {
        try await BusFixture.with { fixture in
            let cases: [(arguments: [String], error: String)] = [
                (["/org/example/Test", "org.example.Test.Add", "string:x"], "org.freedesktop.DBus.Error.InvalidArgs"),
                (["/org/example/Test", "org.example.Test.Add", "int32:1"], "org.freedesktop.DBus.Error.InvalidArgs"),
                (
                    ["/org/example/Test", "org.example.Test.Add", "int32:1", "int32:2", "int32:3"],
                    "org.freedesktop.DBus.Error.InvalidArgs"
                ),
                (["/org/example/Test", "org.example.Test.Nope"], "org.freedesktop.DBus.Error.UnknownMethod"),
                (
                    ["/org/example/Test", "org.example.Nope.Add", "int32:1", "int32:2"],
                    "org.freedesktop.DBus.Error.UnknownInterface"
                ),
                (
                    ["/org/example/Nope", "org.example.Test.Add", "int32:1", "int32:2"],
                    "org.freedesktop.DBus.Error.UnknownObject"
                ),
                (["/", "org.example.Test.Add", "int32:1", "int32:2"], "org.freedesktop.DBus.Error.UnknownObject"),
                (
                    [
                        "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                        "string:Name", "variant:string:other",
                    ],
                    "org.freedesktop.DBus.Error.PropertyReadOnly"
                ),
                (
                    [
                        "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                        "string:Counter", "variant:string:seven",
                    ],
                    "org.freedesktop.DBus.Error.InvalidArgs"
                ),
                (
                    [
                        "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                        "string:Limit", "variant:int32:-1",
                    ],
                    "org.freedesktop.DBus.Error.InvalidArgs"
                ),
                (
                    ["/org/example/Test", "org.freedesktop.DBus.Properties.Get", "string:org.example.Test"],
                    "org.freedesktop.DBus.Error.InvalidArgs"
                ),
                (
                    [
                        "/org/example/Test", "org.freedesktop.DBus.Properties.Get", "string:org.example.Test",
                        "string:Missing",
                    ],
                    "org.freedesktop.DBus.Error.UnknownProperty"
                ),
                (
                    ["/org/example/Test", "org.freedesktop.DBus.Properties.GetAll", "string:org.example.Nope"],
                    "org.freedesktop.DBus.Error.UnknownInterface"
                ),
                (["/org/example/Test", "org.example.Test.Fail"], "org.example.Error.Deliberate"),
            ]
            for (arguments, error) in cases {
                let result = try await fixture.dbusSend(arguments)
                #expect(result.status != 0, "\(arguments) succeeded")
                #expect(result.stderr.hasPrefix("Error \(error)"), "\(arguments): \(result.stderr)")
            }

            let limit = try await fixture.dbusSend(
                [
                    "/org/example/Test", "org.freedesktop.DBus.Properties.Set", "string:org.example.Test",
                    "string:Limit", "variant:int32:-1",
                ]
            )
            // The setter's own message, not a generic one.
            #expect(limit.stderr.contains("Limit cannot be negative"))
            #expect(await fixture.limit() == .int32(10))

            // gdbus checks arguments against the introspected signature before sending, so it cannot send a wrong
            // signature to a method; a wrongly typed property value still reaches the server.
            let gdbusCases: [(path: String, method: String, arguments: [String], error: String)] = [
                ("/org/example/Test", "org.example.Test.Nope", [], "org.freedesktop.DBus.Error.UnknownMethod"),
                (
                    "/org/example/Test", "org.example.Nope.Add", ["1", "2"],
                    "org.freedesktop.DBus.Error.UnknownInterface"
                ),
                ("/org/example/Nope", "org.example.Test.Add", ["1", "2"], "org.freedesktop.DBus.Error.UnknownObject"),
                (
                    "/org/example/Test", "org.freedesktop.DBus.Properties.Set",
                    ["org.example.Test", "Name", "<'other'>"], "org.freedesktop.DBus.Error.PropertyReadOnly"
                ),
                (
                    "/org/example/Test", "org.freedesktop.DBus.Properties.Set",
                    ["org.example.Test", "Limit", "<'high'>"], "org.freedesktop.DBus.Error.InvalidArgs"
                ),
                ("/org/example/Test", "org.example.Test.Fail", [], "org.example.Error.Deliberate"),
            ]
            for (path, method, arguments, error) in gdbusCases {
                let result = try await fixture.gdbusCall(path, method, arguments)
                #expect(result.status != 0, "\(method) \(arguments) succeeded")
                #expect(result.stderr.contains("GDBus.Error:\(error):"), "\(method) \(arguments): \(result.stderr)")
            }

            // busctl prints the error's message rather than its name.
            let busctlCases: [(arguments: [String], message: String)] = [
                (
                    ["call", Self.service, "/org/example/Test", "org.example.Test", "Add", "s", "x"],
                    "takes 'ii', not 's'"
                ),
                (["call", Self.service, "/org/example/Test", "org.example.Test", "Nope"], "no method Nope"),
                (
                    ["call", Self.service, "/org/example/Nope", "org.example.Test", "Fail"],
                    "no object at /org/example/Nope"
                ),
                (
                    ["set-property", Self.service, "/org/example/Test", "org.example.Test", "Name", "s", "x"],
                    "read-only"
                ),
                (
                    ["set-property", Self.service, "/org/example/Test", "org.example.Test", "Limit", "i", "-1"],
                    "Limit cannot be negative"
                ),
                (["call", Self.service, "/org/example/Test", "org.example.Test", "Fail"], "asked to fail"),
            ]
            for (arguments, message) in busctlCases {
                let result = try await fixture.busctl(arguments)
                #expect(result.status != 0, "\(arguments) succeeded")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            }

            // After all of that the server process is still there and still answers.
            let after = try await fixture.dbusSend(["/org/example/Test", "org.example.Test.Add", "int32:2", "int32:2"])
            #expect(after.status == 0)
            #expect(after.stdout.contains("int32 4"))
            let sum = try await fixture.client.call(
                destination: Self.service, path: BusFixture.path, interface: BusFixture.interface, member: "Add",
                [.int32(20), .int32(22)]
            )
            #expect(sum == [.int32(42)])
        }
    }

    @Test func introspectionParsesAndListsMembersAndChildren() async throws {
        try await BusFixture.with { fixture in
            let object = try await fixture.introspect("/org/example/Test")
            let test = try #require(object.interfaces[BusFixture.interface])
            #expect(test.methods == ["Echo", "Add", "Fail", "Ping2"])
            #expect(test.signals == ["Tick"])
            #expect(test.properties == ["Counter": "readwrite", "Limit": "readwrite", "Name": "read"])
            #expect(test.argumentTypes["Add"] == ["i:in", "i:in", "i:out"])
            for standard in [
                "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
            ] {
                #expect(object.interfaces[standard] != nil, "\(standard) missing")
            }
            #expect(object.interfaces["org.freedesktop.DBus.Properties"]?.signals == ["PropertiesChanged"])
            #expect(object.children.isEmpty)

            let manager = try await fixture.introspect("/org/example")
            #expect(manager.children == ["Test"])
            #expect(manager.interfaces["org.freedesktop.DBus.ObjectManager"]?.methods == ["GetManagedObjects"])
            #expect(manager.interfaces[BusFixture.interface] == nil)

            let root = try await fixture.introspect("/")
            #expect(root.children == ["org"])
            let org = try await fixture.introspect("/org")
            #expect(org.children == ["example"])

            // gdbus and busctl read the same document.
            let gdbus = try await fixture.tool(
                "gdbus", ["introspect", "--address", fixture.bus.address, "--dest", Self.service,
                          "--object-path", "/org/example/Test"]
            )
            #expect(gdbus.status == 0, "\(gdbus.stderr)")
            for expected in ["interface org.example.Test", "Add(in  i a,", "signals:", "Tick(u n);",
                             "readonly s Name = 'tester';", "readwrite i Limit = 10;"] {
                #expect(gdbus.stdout.contains(expected), "\(expected) not in \(gdbus.stdout)")
            }
            let busctl = try await fixture.busctl(["introspect", Self.service, "/org/example/Test", "org.example.Test"])
            #expect(busctl.status == 0, "\(busctl.stderr)")
            for expected in [".Add", ".Echo", ".Tick", ".Name", ".Counter", "\"tester\""] {
                #expect(busctl.stdout.contains(expected), "\(expected) not in \(busctl.stdout)")
            }
            let tree = try await fixture.busctl(["--list", "tree", Self.service])
            #expect(tree.status == 0, "\(tree.stderr)")
            let paths = tree.stdout.split(separator: "\n").map(\.trimmed)
            #expect(paths == ["/", "/org", "/org/example", "/org/example/Test"])

            // Unknown objects are not introspectable.
            let missing = try await fixture.dbusSend(["/org/nope", "org.freedesktop.DBus.Introspectable.Introspect"])
            #expect(missing.stderr.hasPrefix("Error org.freedesktop.DBus.Error.UnknownObject"))
        }
    }

    /// The interface field of a method call is optional: the standard methods must then be found as well as the
    /// object's own, on an object as on an intermediate node.
    @Test func callsWithoutAnInterfaceFindTheMethod() async throws {
        try await BusFixture.with { fixture in
            func call(_ path: String, _ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
                let path = try #require(ObjectPath(path))
                return try await fixture.client.call(
                    .methodCall(destination: Self.service, path: path, interface: nil, member: member, body: body)
                ).body
            }
            #expect(try await call("/org/example/Test", "Add", [.int32(1), .int32(2)]) == [.int32(3)])
            let xml = try #require(try await call("/org/example/Test", "Introspect").first?.stringValue)
            #expect(try IntrospectedNode(xml: xml).interfaces[BusFixture.interface] != nil)
            let manager = try #require(try await call("/org/example", "Introspect").first?.stringValue)
            #expect(try IntrospectedNode(xml: manager).children == ["Test"])
            let root = try #require(try await call("/", "Introspect").first?.stringValue)
            #expect(try IntrospectedNode(xml: root).children == ["org"])
            let name = try await call("/org/example/Test", "Get", [.string(BusFixture.interface), .string("Name")])
            #expect(name == [.variant(.string("tester"))])
            let managed = try await call("/org/example", "GetManagedObjects")
            #expect(managed.first?.type.signature == "a{oa{sa{sv}}}")

            await #expect(throws: DBusError.unknownMethod("/org/example/Test has no method Nope")) {
                try await call("/org/example/Test", "Nope")
            }
            await #expect(throws: DBusError.self) { try await call("/org/example/Test", "Introspect", [.int32(1)]) }
            await #expect(throws: DBusError.self) { try await call("/org/nope", "Introspect") }
            // GetManagedObjects belongs to object managers only.
            await #expect(throws: DBusError.self) { try await call("/org/example/Test", "GetManagedObjects") }
        }
    }

    @Test func peerInterfaceAnswers() async throws {
        try await BusFixture.with { fixture in
            let dbusSend = try await fixture.dbusSend(["/org/example/Test", "org.freedesktop.DBus.Peer.Ping"])
            #expect(dbusSend.status == 0, "\(dbusSend.stderr)")
            #expect(dbusSend.stdout.hasPrefix("method return"))
            let gdbus = try await fixture.gdbusCall("/org/example/Test", "org.freedesktop.DBus.Peer.Ping", [])
            #expect(gdbus.status == 0, "\(gdbus.stderr)")
            #expect(gdbus.stdout.trimmed == "()")
            let busctl = try await fixture.busctl(
                ["call", Self.service, "/org/example/Test", "org.freedesktop.DBus.Peer", "Ping"]
            )
            #expect(busctl.status == 0, "\(busctl.stderr)")
            let reply = try await fixture.client.call(
                destination: Self.service, path: BusFixture.path, interface: "org.freedesktop.DBus.Peer", member: "Ping"
            )
            #expect(reply.isEmpty)
        }
    }
}

// MARK: Tools

extension BusFixture {
    /// Runs an external tool with this bus as its session bus, bounded so that a stuck tool fails the test.
    func tool(_ name: String, _ arguments: [String]) async throws -> CommandResult {
        let environment = bus.environment
        return try await withTimeout(seconds: 30) {
            try await Command.run(name, arguments, environment: environment)
        }
    }

    func dbusSend(_ arguments: [String], printReply: String = "--print-reply") async throws -> CommandResult {
        try await tool("dbus-send", ["--bus=\(bus.address)", printReply, "--dest=\(InteropTests.service)"] + arguments)
    }

    func gdbusCall(_ path: String, _ method: String, _ arguments: [String]) async throws -> CommandResult {
        try await tool(
            "gdbus",
            ["call", "--address", bus.address, "--dest", InteropTests.service]
                + ["--object-path", path, "--method", method] + arguments
        )
    }

    /// Leading `--options` go before `--`, so that the positional arguments after it may be negative numbers.
    func busctl(_ arguments: [String]) async throws -> CommandResult {
        let options = arguments.prefix { $0.hasPrefix("--") }
        let positional = arguments.drop { $0.hasPrefix("--") }
        return try await tool("busctl", ["--address=\(bus.address)", "--no-pager"] + options + ["--"] + positional)
    }

    /// The server's current value of `Limit`.
    func limit() async -> DBusValue? {
        await objects.property("Limit", interface: Self.interface, at: Self.path)
    }

    /// Introspects `path` with `dbus-send` and parses the XML.
    func introspect(_ path: String) async throws -> IntrospectedNode {
        let result = try await dbusSend(
            [path, "org.freedesktop.DBus.Introspectable.Introspect"], printReply: "--print-reply=literal"
        )
        #expect(result.status == 0, "\(result.stderr)")
        return try IntrospectedNode(xml: result.stdout.trimmed)
    }
}

/// The parts of an introspection document the tests check.
struct IntrospectedNode {
    struct Interface: Equatable {
        var methods: [String] = []
        var signals: [String] = []
        var properties: [String: String] = [:]
        /// "type:direction" for each argument of each method.
        var argumentTypes: [String: [String]] = [:]
    }

    var interfaces: [String: Interface] = [:]
    var children: [String] = []

    init(xml: String) throws {
        let parser = XMLParser(data: Data(xml.utf8))
        let delegate = Delegate()
        parser.delegate = delegate
        guard parser.parse() else {
            let error = parser.parserError.map { "\($0)" } ?? "?"
            throw TestSupportError("introspection XML does not parse: \(error)\n\(xml)")
        }
        interfaces = delegate.interfaces
        children = delegate.children
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var interfaces: [String: Interface] = [:]
        var children: [String] = []
        var depth = 0
        var interface: String?
        var method: String?

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            depth += 1
            let name = attributes["name"] ?? ""
            switch element {
            case "node" where depth == 2: children.append(name)
            case "interface":
                interface = name
                interfaces[name] = Interface()
            case "method":
                method = name
                if let interface { interfaces[interface]?.methods.append(name) }
            case "signal":
                if let interface { interfaces[interface]?.signals.append(name) }
            case "property":
                if let interface { interfaces[interface]?.properties[name] = attributes["access"] ?? "" }
            case "arg":
                if let interface, let method {
                    let entry = "\(attributes["type"] ?? ""):\(attributes["direction"] ?? "in")"
                    interfaces[interface]?.argumentTypes[method, default: []].append(entry)
                }
            default: break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            if element == "interface" { interface = nil }
            if element == "method" { method = nil }
        }
    }
}

extension StringProtocol {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
