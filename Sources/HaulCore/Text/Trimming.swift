extension StringProtocol {
    /// Without the whitespace (newlines included) at either end: HTTP's optional white space around a header value's
    /// parts, or what a person typed around a setting. Foundation's `trimmingCharacters(in:)` is not in
    /// FoundationEssentials, which is all hauld links.
    package func trimmingWhitespace() -> String {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map(index(after:)) ?? start
        return String(self[start..<end])
    }
}
