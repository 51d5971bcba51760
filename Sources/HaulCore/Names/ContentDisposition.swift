/// The file name a `Content-Disposition` header suggests: `filename*` (RFC 8187, UTF-8 or ISO-8859-1) first, then
/// `filename` (RFC 6266, a quoted string or a token). The name is returned as the server sent it: ``SafeFileName``
/// makes it safe.
///
/// Lenient where browsers are (a missing disposition type, a quoted `filename*`), strict where a name could be made up:
/// a `filename*` in another charset, with bad percent escapes or bytes that are not UTF-8 is ignored, and the first of
/// two parameters of one name is used.
package enum ContentDisposition {
    /// The suggested name, or nil when the header suggests none.
    package static func fileName(_ header: String) -> String? {
        var extended: String?
        var plain: String?
        for (name, value) in parameters(header) {
            switch name {
            case "filename*" where extended == nil: extended = extendedValue(value) ?? ""
            case "filename" where plain == nil: plain = value
            default: break
            }
        }
        if let extended, !extended.isEmpty { return extended }
        return plain.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The header's parameters, names lower-cased, values unquoted; the disposition type (no `=`) is skipped.
    static func parameters(_ header: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var rest = Substring(header)
        while !rest.isEmpty {
            let part = rest.prefix { $0 != ";" && $0 != "=" }
            rest = rest[part.endIndex...]
            guard rest.first == "=" else {
                rest = rest.drop { $0 == ";" }
                continue
            }
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            let value: String
            if rest.first == "\"" {
                let (unquoted, after) = quoted(rest.dropFirst())
                value = unquoted
                rest = after.drop { $0 != ";" }
            } else {
                let token = rest.prefix { $0 != ";" }
                value = token.trimmingWhitespace()
                rest = rest[token.endIndex...]
            }
            rest = rest.drop { $0 == ";" }
            result.append((part.trimmingWhitespace().lowercased(), value))
        }
        return result
    }

    /// A quoted string's text up to its closing quote (or the end), `\` escaping the next character; and what follows.
    private static func quoted(_ text: Substring) -> (String, Substring) {
        var value = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if character == "\"" { return (value, text[index...]) }
            if character == "\\", index < text.endIndex {
                value.append(text[index])
                index = text.index(after: index)
            } else {
                value.append(character)
            }
        }
        return (value, text[index...])
    }

    /// `charset'language'percent-encoded` (RFC 8187) decoded, or nil.
    static func extendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = percentDecoded(parts[2]) else { return nil }
        switch parts[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        // Each byte is the code point of the same number.
        case "iso-8859-1": return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default: return nil
        }
    }

    /// The bytes `%XX` escapes stand for, other characters as their UTF-8; nil for a `%` without two hex digits.
    package static func percentDecoded(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
