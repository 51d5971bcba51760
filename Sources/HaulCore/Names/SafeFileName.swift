/// A name hauld may give a file in a folder, whatever a server or a client suggested: one path component, not hidden,
/// not traversing, short enough for the file system once the partial file's suffix is added.
package enum SafeFileName {
    /// The suffix of a download's partial file, beside its destination.
    package static let partialSuffix = ".haul-partial"
    /// A name's bytes at most: NAME_MAX (255) less the partial file's suffix, so that the partial file can exist too.
    package static let maximumBytes = 255 - partialSuffix.utf8.count
    /// The name when nothing else gives one.
    package static let fallback = "download"

    /// `suggested` made safe, or nil when nothing is left of it. As browsers and `curl -OJ` do, only the last
    /// component of a path is kept (`../../.bashrc` is `bashrc`, `/etc/passwd` is `passwd`); control characters
    /// (bidirectional overrides included, which can disguise an extension) and `\` become `_`; leading dots, leading
    /// and trailing spaces and trailing dots go; the result is cut to ``maximumBytes`` keeping its extension.
    package static func make(_ suggested: String) -> String? {
        let component = suggested.split(separator: "/").last { !$0.allSatisfy(isBlank) } ?? ""
        let replaced = String(String.UnicodeScalarView(component.unicodeScalars.map { isUnsafe($0) ? "_" : $0 }))
        let start = replaced.firstIndex { $0 != "." && $0 != " " } ?? replaced.endIndex
        let end = replaced.lastIndex { $0 != "." && $0 != " " }.map(replaced.index(after:)) ?? start
        let trimmed = String(replaced[start..<end])
        guard !trimmed.isEmpty else { return nil }
        return fitted(FileNameParts(trimmed))
    }

    /// `parts` joined, its stem cut on a character boundary so that the whole fits in ``maximumBytes``.
    package static func fitted(_ parts: FileNameParts, suffix: String = "") -> String {
        let room = maximumBytes - parts.extension.utf8.count - suffix.utf8.count
        let stem = prefix(of: parts.stem, bytes: room)
        // A stem cut down to nothing (a suffix that leaves no room) cuts the whole name instead.
        guard !stem.isEmpty || parts.stem.isEmpty else {
            return String(prefix(of: parts.stem + suffix + parts.extension, bytes: maximumBytes))
        }
        return String(stem) + suffix + parts.extension
    }

    /// The longest start of `text` of at most `bytes` bytes of UTF-8 that ends between two characters.
    static func prefix(of text: String, bytes: Int) -> Substring {
        var end = text.startIndex
        var count = 0
        for index in text.indices {
            count += text[index].utf8.count
            guard count <= bytes else { break }
            end = text.index(after: index)
        }
        return text[..<end]
    }

    private static func isBlank(_ character: Character) -> Bool { character == "." || character == " " }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x5C: true  // \
        // Bidirectional marks, embeddings, overrides and isolates: "txt.exe" shown as "exe.txt".
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// A file name split into its stem and its extension (`archive` and `.tar.gz`, `notes` and `.txt`): what a suffix
/// goes between, and what a cut keeps.
package struct FileNameParts: Equatable, Sendable {
    package var stem: String
    /// Empty, or a dot and up to 16 letters and digits, preceded by `.tar` when that comes before it.
    package var `extension`: String

    package static let maximumExtensionBytes = 16

    package init(stem: String, extension: String) {
        self.stem = stem
        self.extension = `extension`
    }

    package init(_ name: String) {
        guard let dot = Self.extensionStart(of: Substring(name)) else {
            (stem, self.extension) = (name, "")
            return
        }
        var start = dot
        let before = name[..<dot]
        if let inner = Self.extensionStart(of: before), before[inner...].lowercased() == ".tar" { start = inner }
        (stem, self.extension) = (String(name[..<start]), String(name[start...]))
    }

    /// Where the last dot of a short alphanumeric extension is, after a non-empty stem.
    private static func extensionStart(of name: Substring) -> Substring.Index? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let letters = name[name.index(after: dot)...]
        guard (1...maximumExtensionBytes).contains(letters.utf8.count),
            letters.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { return nil }
        return dot
    }
}
