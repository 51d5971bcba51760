/// Validation of the names the D-Bus specification constrains.
///
/// libdbus aborts the process on a failed check, so every name that reaches it is validated here first.
public enum DBusNames {
    /// `org.example.Interface`: two or more elements of `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    public static func isValidInterface(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return elements.count >= 2 && elements.allSatisfy { isElement($0, allowDash: false, allowLeadingDigit: false) }
    }

    /// Error names follow the interface-name rules.
    public static func isValidErrorName(_ name: String) -> Bool { isValidInterface(name) }

    /// A member (method, signal or property) name: one element, no dots.
    public static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count <= 255 && isElement(bytes[...], allowDash: false, allowLeadingDigit: false)
    }

    /// A unique (`:1.42`) or well-known (`org.example.App`) bus name.
    public static func isValidBusName(_ name: String) -> Bool {
        var bytes = Array(name.utf8)[...]
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let unique = bytes.first == UInt8(ascii: ":")
        if unique { bytes = bytes.dropFirst() }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return elements.count >= 2
            && elements.allSatisfy { isElement($0, allowDash: true, allowLeadingDigit: unique) }
    }

    private static func isElement(_ bytes: ArraySlice<UInt8>, allowDash: Bool, allowLeadingDigit: Bool) -> Bool {
        guard let first = bytes.first else { return false }
        if !allowLeadingDigit, isDigit(first) { return false }
        return bytes.allSatisfy { isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "_") || (allowDash && $0 == UInt8(ascii: "-")) }
    }

    static func isAlpha(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
