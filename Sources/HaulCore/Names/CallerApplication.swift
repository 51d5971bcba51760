/// Which application a calling process belongs to (a task's `Application`), read from what `/proc/PID` shows of it:
/// the Flatpak app id of a sandboxed process, the application id in the name of the systemd unit a desktop started
/// it in, else the executable's name. Pure: the service reads the files, and anything in them may be hostile.
package enum CallerApplication {
    /// The longest application id kept.
    package static let maximumBytes = 255

    /// The app id in a `.flatpak-info` file: `name=` in its `[Application]` group.
    package static func flatpakAppID(_ text: String) -> String? {
        var group = ""
        for line in text.split(whereSeparator: \.isNewline) {
            let line = line.trimmingWhitespace()
            if line.hasPrefix("[") {
                group = line
            } else if group == "[Application]", line.hasPrefix("name=") {
                return validID(String(line.dropFirst(5)))
            }
        }
        return nil
    }

    /// The application id of the innermost app unit in a `/proc/PID/cgroup` file, named as systemd's desktop
    /// conventions ask: `app[-<launcher>]-<id>-<random>.scope` or `app[-<launcher>]-<id>[@<random>].service`, a `-`
    /// inside a field escaped as `\x2d`. So `app-gnome-firefox-1234.scope` is `firefox`, and
    /// `app-org.kde.dolphin@1a2b.service` is `org.kde.dolphin`.
    package static func systemdAppID(cgroup text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline).reversed() {
            // `hierarchy-ID:controllers:path`; the path may itself hold colons.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            for unit in fields[2].split(separator: "/").reversed() {
                if let id = appID(unit: unit) { return id }
            }
        }
        return nil
    }

    /// The application id in one unit's name, or nil when it is not an app unit.
    static func appID(unit: Substring) -> String? {
        let isScope = unit.hasSuffix(".scope")
        guard isScope || unit.hasSuffix(".service") else { return nil }
        var name = unit.dropLast(isScope ? 6 : 8)
        if !isScope, let at = name.firstIndex(of: "@") { name = name[..<at] }
        guard name.hasPrefix("app-") else { return nil }
        var fields = name.dropFirst(4).split(separator: "-", omittingEmptySubsequences: false)
        // A scope's last field is its random part.
        if isScope { _ = fields.popLast() }
        // One field is the id; with more, the first is the launcher (`gnome`, `flatpak`, `kde`), and an id whose own
        // dashes were not escaped (older launchers) keeps them.
        guard let first = fields.first else { return nil }
        let id = fields.count == 1 ? String(first) : fields.dropFirst().joined(separator: "-")
        return unescaped(Substring(id)).flatMap(validID)
    }

    /// The executable's name from `/proc/PID/comm`.
    package static func commandName(_ text: String) -> String? {
        let name = text.hasSuffix("\n") ? String(text.dropLast()) : text
        return validID(name)
    }

    /// The name a client gives itself (the `application` option), if it is one hauld can show.
    package static func claimed(_ name: String) -> String? { validID(name) }

    /// systemd's unit-name escaping undone: `\xNN` is the byte NN.
    static func unescaped(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.first == UInt8(ascii: "x"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.dropFirst().prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `id` if it is fit to show and to name a desktop file: not empty, at most ``maximumBytes``, no control
    /// characters, no `/` and no white space.
    static func validID(_ id: String) -> String? {
        guard !id.isEmpty, id.utf8.count <= maximumBytes,
            !id.unicodeScalars.contains(where: {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "/" || $0.properties.isWhitespace
            })
        else { return nil }
        return id
    }
}
