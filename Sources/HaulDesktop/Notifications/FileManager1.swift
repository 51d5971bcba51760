package import DBusKit
import FoundationEssentials

/// freedesktop's file manager interface, which Dolphin, Nautilus, Nemo, Caja and Thunar serve on
/// `org.freedesktop.FileManager1` at `/org/freedesktop/FileManager1`: `ShowItems(as uris, s startupId)` opens the
/// folder of each item with the item selected. The bus starts a file manager that is not running, where one is
/// installed.
package enum FileManager1 {
    package static let busName = "org.freedesktop.FileManager1"
    package static let path: ObjectPath = "/org/freedesktop/FileManager1"
    package static let interface = "org.freedesktop.FileManager1"

    /// `ShowItems` for one local file, as a `file://` URI; no startup id (hauld has no window to hand focus from).
    package static func showItem(_ file: String) -> DBusMessage {
        .methodCall(
            destination: busName, path: path, interface: interface, member: "ShowItems",
            body: [.strings([URL(fileURLWithPath: file).absoluteString]), .string("")]
        )
    }

    /// The folder holding `file`: what is opened when no file manager answers.
    package static func folder(of file: String) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().path
    }
}
