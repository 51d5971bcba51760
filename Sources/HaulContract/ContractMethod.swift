package import DBusKit

/// A method of one of the contract's interfaces: its name (the raw value) and arguments.
package protocol ContractMethod: RawRepresentable<String>, CaseIterable, Hashable, Sendable {
    var declaration: DBusInterfaceDescription.Method { get }
}

extension ContractMethod {
    /// Method handlers keyed by name, as an exported interface takes them.
    package static func handlers(
        _ handlers: [Self: DBusExportedInterface.MethodHandler]
    ) -> [String: DBusExportedInterface.MethodHandler] {
        handlers.byName
    }
}
