import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The members of each interface in introspection XML, as comparable lines such as
/// `method Download(in s url, in s destination, out o task)`. Comments (documentation) are ignored.
public enum IntrospectionMembers {
    public static func parse(_ xml: String) throws -> [String: [String]] {
        let delegate = Collector()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        guard parser.parse() else {
            throw TestSupportError("introspection XML does not parse: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        return delegate.interfaces.mapValues { $0.sorted() }
    }

    /// Child node names.
    public static func children(_ xml: String) throws -> [String] {
        let delegate = Collector()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        guard parser.parse() else { throw TestSupportError("introspection XML does not parse") }
        return delegate.children
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var interfaces: [String: [String]] = [:]
        var children: [String] = []
        private var interface: String?
        private var member: (kind: String, name: String, arguments: [String])?
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
                interface = attributes["name"]
                if let interface { interfaces[interface, default: []] = [] }
            case "method", "signal":
                member = (element, attributes["name"] ?? "?", [])
            case "arg":
                let direction = attributes["direction"].map { "\($0) " } ?? (member?.kind == "method" ? "in " : "")
                member?.arguments.append("\(direction)\(attributes["type"] ?? "?") \(attributes["name"] ?? "")")
            case "property":
                if let interface {
                    interfaces[interface]?.append(
                        "property \(attributes["name"] ?? "?") \(attributes["type"] ?? "?") \(attributes["access"] ?? "?")"
                    )
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "node":
                depth -= 1
            case "interface":
                interface = nil
            case "method", "signal":
                if let interface, let member {
                    interfaces[interface]?.append("\(member.kind) \(member.name)(\(member.arguments.joined(separator: ", ")))")
                }
                member = nil
            default:
                break
            }
        }
    }
}
