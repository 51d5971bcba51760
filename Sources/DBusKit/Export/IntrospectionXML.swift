/// Writes introspection XML in the format of the D-Bus specification.
package enum IntrospectionXML {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    package static func node(interfaces: [DBusInterfaceDescription], children: [String]) -> String {
        var lines = [doctype, "<node>"]
        for interface in interfaces { lines += self.interface(interface) }
        for child in children { lines.append("  <node name=\"\(child)\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func interface(_ interface: DBusInterfaceDescription) -> [String] {
        var lines = ["  <interface name=\"\(interface.name)\">"]
        for method in interface.methods {
            let arguments = method.inputs.map { argument($0, direction: "in") }
                + method.outputs.map { argument($0, direction: "out") }
            lines += element("method", method.name, arguments)
        }
        for signal in interface.signals {
            lines += element("signal", signal.name, signal.arguments.map { argument($0, direction: nil) })
        }
        for property in interface.properties {
            lines.append(
                "    <property name=\"\(property.name)\" type=\"\(escape(property.type.signature))\" "
                    + "access=\"\(property.access.rawValue)\"/>"
            )
        }
        lines.append("  </interface>")
        return lines
    }

    private static func element(_ kind: String, _ name: String, _ arguments: [String]) -> [String] {
        guard !arguments.isEmpty else { return ["    <\(kind) name=\"\(name)\"/>"] }
        return ["    <\(kind) name=\"\(name)\">"] + arguments + ["    </\(kind)>"]
    }

    private static func argument(_ argument: DBusInterfaceDescription.Argument, direction: String?) -> String {
        let direction = direction.map { " direction=\"\($0)\"" } ?? ""
        return "      <arg name=\"\(argument.name)\" type=\"\(escape(argument.type.signature))\"\(direction)/>"
    }

    /// Signatures contain no markup characters but `{`/`}`; names are validated identifiers. Escape anyway.
    private static func escape(_ text: String) -> String {
        text.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll("\"", with: "&quot;")
    }
}
