/// What the GNOME Shell extension's test hook describes (`Describe()`, its indicator.js `describe()`): the button, the
/// menu's state and every item of the menu with the labels that lead to it.
struct ExtensionView: Decodable, Sendable {
    struct Box: Decodable, Sendable {
        var x, y, width, height: Double
    }

    /// A transfer's row, as model.js works it out.
    struct Row: Decodable, Sendable {
        var id: UInt32
        var name, application, title, detail, stateText: String
        var canSuspend, canResume, canCancel: Bool
    }

    struct Item: Decodable, Sendable {
        var labels: [String]
        var label: String
        var enabled: Bool
        var selected: Bool?
    }

    var button: Box
    var iconVisible, menuOpen, greyed: Bool
    var status: String?
    var rows: [Row]
    var items: [Item]

    func row(_ name: String) -> Row? { rows.first { $0.name == name } }

    func item(_ labels: String...) -> Item? { items.first { $0.labels == labels } }
}
