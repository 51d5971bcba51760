import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The members of each interface in introspection XML, as comparable lines such as
/// `method Download(in s url, in s destination, out o task)`, or as ``Interface`` values for a test that calls each
/// one. Comments (documentation) are ignored.
package enum IntrospectionMembers {
    /// One interface of an introspected object.
    package struct Interface: Sendable, Equatable {
        package struct Argument: Sendable, Equatable {
            package var name: String
            /// The argument's signature, such as `a{sv}`.
            package var type: String
            /// `in` or `out`; empty for a signal's arguments.
            package var direction: String
        }

        package struct Member: Sendable, Equatable {
            /// `method` or `signal`.
            package var kind: String
            package var name: String
            package var arguments: [Argument]

            /// The arguments a call sends.
            package var inputs: [Argument] { arguments.filter { $0.direction == "in" } }
        }

        package struct Property: Sendable, Equatable {
            package var name: String
            package var type: String
            /// `read`, `write` or `readwrite`.
            package var access: String
        }

        package var name: String
        package var members: [Member] = []
        package var properties: [Property] = []

        package var methods: [Member] { members.filter { $0.kind == "method" } }
    }

    /// Each interface's members as sorted lines, keyed by interface name.
    package static func parse(_ xml: String) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for interface in try interfaces(xml) {
            let members = interface.members.map { member in
                let arguments = member.arguments.map { argument in
                    (argument.direction.isEmpty ? "" : "\(argument.direction) ") + "\(argument.type) \(argument.name)"
                }
                return "\(member.kind) \(member.name)(\(arguments.joined(separator: ", ")))"
            }
            let properties = interface.properties.map { "property \($0.name) \($0.type) \($0.access)" }
            result[interface.name] = (members + properties).sorted()
        }
        return result
    }

    /// The interfaces of the object, in document order.
    package static func interfaces(_ xml: String) throws -> [Interface] {
        try collect(xml).interfaces
    }

    /// Child node names.
    package static func children(_ xml: String) throws -> [String] {
        try collect(xml).children
    }

    private static func collect(_ xml: String) throws -> Collector {
        let delegate = Collector()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        guard parser.parse() else {
            throw TestSupportError("introspection XML does not parse: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        return delegate
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var interfaces: [Interface] = []
        var children: [String] = []
        private var interface: Interface?
        private var member: Interface.Member?
        private var depth = 0

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "node":
                depth += 1
                if depth == 2, let name = attributes["name"] { children.append(name) }
            case "interface":
                interface = attributes["name"].map { Interface(name: $0) }
            case "method", "signal":
                member = Interface.Member(kind: element, name: attributes["name"] ?? "?", arguments: [])
            case "arg":
                let direction = attributes["direction"] ?? (member?.kind == "method" ? "in" : "")
                member?.arguments.append(
                    Interface.Argument(
                        name: attributes["name"] ?? "", type: attributes["type"] ?? "?", direction: direction)
                )
            case "property":
                interface?.properties.append(
                    Interface.Property(
                        name: attributes["name"] ?? "?", type: attributes["type"] ?? "?",
                        access: attributes["access"] ?? "?"
                    )
                )
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "node":
                depth -= 1
            case "interface":
                if let interface { interfaces.append(interface) }
                interface = nil
            case "method", "signal":
                if let member { interface?.members.append(member) }
                member = nil
            default:
                break
            }
        }
    }
}
