package import DBusKit

/// A key of the options (`a{sv}`) of `DownloadWithOptions` or `UploadWithOptions`: its name (the raw value) and the
/// D-Bus type its value must have.
package protocol ContractOption: RawRepresentable<String>, CaseIterable, Hashable, Sendable {
    var type: DBusType { get }
}

extension ContractOption {
    /// Options keyed by name, as the `a{sv}` carries them.
    package static func values(_ values: [Self: DBusValue]) -> [String: DBusValue] { values.byName }

    /// Every key with its signature, in the contract's order: `headers a{ss}, sha256 s, …`.
    package static var summary: String {
        allCases.map { "\($0.rawValue) \($0.type.signature)" }.joined(separator: ", ")
    }
}
