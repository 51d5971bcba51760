/// The small markup subset that notification bodies and tray tooltips may be rendered with: text shown there
/// (file names, error messages) is escaped so that it always reads as written.
enum Markup {
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
