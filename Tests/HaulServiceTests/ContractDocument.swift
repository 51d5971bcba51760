import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// `dbus/org.haul.Haul1.xml` as the tests read it: its members, as introspection lines, and the documentation in its
/// comments (option tables, defaults, state names, error names), which the contract target must agree with.
struct ContractDocument {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let file = repository.appendingPathComponent("dbus/\(HaulBus.name).xml")

    let text: String

    init() throws {
        text = try String(contentsOf: Self.file, encoding: .utf8)
    }

    /// Each interface's members as sorted lines (`method Download(in s url, …)`), keyed by interface name.
    func members() throws -> [String: [String]] { try IntrospectionMembers.parse(text) }

    func interface(_ name: String) throws -> IntrospectionMembers.Interface {
        try #require(try IntrospectionMembers.interfaces(text).first { $0.name == name })
    }

    /// The text of the `<interface>` element named `name`, comments included.
    func block(of interface: String) throws -> Substring {
        let start = try #require(text.range(of: "<interface name=\"\(interface)\">"))
        let end = try #require(text.range(of: "</interface>", range: start.upperBound..<text.endIndex))
        return text[start.lowerBound..<end.upperBound]
    }

    /// The comment right before the element `<kind name="name"` of the interface.
    func comment(before kind: String, _ name: String, in interface: String) throws -> String {
        let block = try block(of: interface)
        let element = try #require(block.range(of: "<\(kind) name=\"\(name)\""), "\(interface) has no \(kind) \(name)")
        let before = block[..<element.lowerBound]
        let open = try #require(before.range(of: "<!--", options: .backwards), "no comment before \(kind) \(name)")
        let close = try #require(before.range(of: "-->", range: open.upperBound..<before.endIndex))
        let between = before[close.upperBound...]
        #expect(between.allSatisfy { $0.isWhitespace }, "the comment before \(name) belongs to another")
        return String(before[open.upperBound..<close.lowerBound])
    }

    /// `text` with every run of white space (line breaks and indentation too) as one space.
    static func flattened(_ text: some StringProtocol) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The strings in double quotes in `text`: the values a comment names, such as `"running"`.
    static func quoted(in text: String) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The option table of a `…WithOptions` comment: rows of a lower-case key and its signature, such as
    /// `start-suspended  b  create the task suspended`.
    static func optionTable(in comment: String) -> [(key: String, signature: String)] {
        comment.split(separator: "\n").compactMap { line in
            let words = line.split(whereSeparator: \.isWhitespace)
            guard words.count >= 2, words[0].allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }),
                words[1].allSatisfy({ "abdginoqstuvxy{}()".contains($0) })
            else { return nil }
            return (String(words[0]), String(words[1]))
        }
    }

    /// The names of `org.haul.Haul1.Error.{A, B, …}` in the header comment.
    func errorList(prefix: String) throws -> [String] {
        let start = try #require(text.range(of: prefix + "{"))
        let end = try #require(text.range(of: "}", range: start.upperBound..<text.endIndex))
        return text[start.upperBound..<end.lowerBound].split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Every `org.haul.Haul1.Error.<Name>` the document mentions outside the `{…}` list.
    func mentionedErrors(prefix: String) -> Set<String> {
        var names: Set<String> = []
        var rest = text[...]
        while let range = rest.range(of: prefix) {
            let name = rest[range.upperBound...].prefix { $0.isLetter }
            if !name.isEmpty { names.insert(String(name)) }
            rest = rest[range.upperBound...]
        }
        return names
    }
}
