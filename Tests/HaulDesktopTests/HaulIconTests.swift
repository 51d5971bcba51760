import DBusKit
import Foundation
import HaulDesktop
import Testing

/// Haul's icons: the SVG files in `integrations/icons` and the pixmaps drawn for hosts that cannot find them show the
/// same shapes, and hauld finds the files where an installation or a build puts them.
@Suite(.timeLimit(.minutes(1))) struct HaulIconTests {
    static let icons = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("integrations/icons")

    /// The `<circle>` and `<polygon>`s of an SVG file, as written.
    static func shapes(of icon: HaulIcon) throws -> (circle: [String: String], polygons: [[String: String]]) {
        let text = try String(contentsOf: icons.appendingPathComponent(IconLocation.file(icon)), encoding: .utf8)
        func elements(_ name: String) -> [[String: String]] {
            text.components(separatedBy: "<\(name) ").dropFirst().map { element in
                let attributes = element.prefix { $0 != ">" }
                var found: [String: String] = [:]
                for pair in attributes.components(separatedBy: "\" ") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    found[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1]
                        .trimmingCharacters(in: CharacterSet(charactersIn: "\"/ "))
                }
                return found
            }
        }
        return (try #require(elements("circle").first), elements("polygon"))
    }

    static func hex(_ colour: UInt32) -> String {
        let digits = String(colour, radix: 16)
        return "#" + String(repeating: "0", count: 6 - digits.count) + digits
    }

    @Test(arguments: HaulIcon.allCases)
    func theSVGFileHasTheShapesThePixmapsAreDrawnFrom(icon: HaulIcon) throws {
        let (circle, polygons) = try Self.shapes(of: icon)
        let (centre, radius) = HaulIcon.disc
        #expect(circle["cx"].flatMap(Double.init) == centre.x)
        #expect(circle["cy"].flatMap(Double.init) == centre.y)
        #expect(circle["r"].flatMap(Double.init) == radius)
        #expect(circle["fill"]?.lowercased() == Self.hex(icon.discColour))
        let points = polygons.map { polygon in
            (polygon["points"] ?? "").split(separator: " ").map { pair in
                let xy = pair.split(separator: ",").compactMap { Double($0) }
                return HaulIcon.Point(xy.first ?? .nan, xy.last ?? .nan)
            }
        }
        #expect(points == icon.polygons)
        #expect(polygons.allSatisfy { $0["fill"]?.lowercased() == "#ffffff" })
    }

    @Test func everyIconIsInTheSourceTreeUnderItsName() {
        for name in ["scalable/apps/haul", "scalable/apps/haul-busy", "symbolic/apps/haul-symbolic",
            "symbolic/apps/haul-busy-symbolic"]
        {
            let file = Self.icons.appendingPathComponent("hicolor/\(name).svg")
            #expect(FileManager.default.fileExists(atPath: file.path), "\(file.path)")
        }
        #expect(HaulIcon.allCases.map(\.name) == ["haul", "haul-busy"])
    }

    /// Pixels of the drawn icon: the disc's colour, white where an arrow is, transparent outside the disc, and
    /// half-covered pixels in between on the edge.
    @Test func thePixmapsAreTheIconDrawnAtEachSize() throws {
        func pixel(_ bytes: [UInt8], size: Int, _ x: Int, _ y: Int) -> [UInt8] {
            Array(bytes[(y * size + x) * 4..<(y * size + x) * 4 + 4])
        }
        let idle = IconRaster.argb(.idle, size: 32)
        #expect(idle.count == 32 * 32 * 4)
        #expect(pixel(idle, size: 32, 0, 0) == [0, 0, 0, 0], "outside the disc")
        #expect(pixel(idle, size: 32, 16, 10) == [255, 255, 255, 255], "the arrow's shaft")
        #expect(pixel(idle, size: 32, 5, 16) == [255, 0x34, 0x65, 0xA4], "the disc")
        let edge = pixel(idle, size: 32, 5, 5)[0]
        #expect(edge > 0 && edge < 255, "the disc's edge is smoothed: \(edge)")
        let busy = IconRaster.argb(.busy, size: 16)
        #expect(pixel(busy, size: 16, 8, 1) == [255, 0xF5, 0x79, 0x00], "the busy disc, between the arrows")

        guard case .array(_, let images) = IconRaster.pixmaps(.busy) else {
            Issue.record("not an array")
            return
        }
        #expect(images.count == IconRaster.sizes.count)
        for (image, size) in zip(images, IconRaster.sizes) {
            guard case .structure(let fields) = image, fields.count == 3, case .array(.byte, let bytes) = fields[2]
            else {
                Issue.record("\(size): not (iiay)")
                continue
            }
            #expect(fields[0] == .int32(Int32(size)) && fields[1] == .int32(Int32(size)))
            #expect(bytes.count == size * size * 4)
        }
    }

    /// Installed in a theme the desktop reads, names are enough; else the folder beside the executable (an
    /// installation elsewhere, or the source tree of a build); found nowhere, pixmaps.
    @Test func theIconsAreFoundInTheThemeElseBesideTheExecutable() {
        let svg = IconLocation.file(.idle)
        func locate(_ files: Set<String>, executable: String? = "/src/haul/.build/x86_64-unknown-linux-gnu/debug/hauld")
            -> IconLocation
        {
            IconLocation.locate(
                executable: executable, dataHome: "/home/u/.local/share",
                dataDirectories: ["/usr/local/share", "/usr/share"], exists: { files.contains($0) }
            )
        }
        let installed = locate(["/usr/share/icons/\(svg)", "/src/haul/integrations/icons/\(svg)"])
        #expect(installed == IconLocation(folder: nil, isInstalled: true))
        #expect(installed.themePath == "" && !installed.needsPixmaps)
        #expect(installed.notificationIcon(.idle) == "haul")
        #expect(locate(["/home/u/.local/share/icons/\(svg)"]).isInstalled)

        let build = locate(["/src/haul/integrations/icons/\(svg)"])
        #expect(build == IconLocation(folder: "/src/haul/integrations/icons", isInstalled: false))
        #expect(build.themePath == "/src/haul/integrations/icons" && !build.needsPixmaps)
        #expect(build.notificationIcon(.idle) == nil, "a file URI: GNOME Shell shows no banner for it")

        let unpacked = locate(["/tmp/x/usr/share/icons/\(svg)"], executable: "/tmp/x/usr/bin/hauld")
        #expect(unpacked.themePath == "/tmp/x/usr/share/icons")

        let nowhere = locate([])
        #expect(nowhere.needsPixmaps && nowhere.themePath == "")
        #expect(nowhere.notificationIcon(.idle) == nil)
        #expect(locate([], executable: nil).needsPixmaps)
        #expect(locate(["/src/haul/integrations/icons/\(svg)"], executable: "hauld").needsPixmaps, "not a path")
    }

    /// The tray icon: named, with pixmaps only when the name cannot be found.
    @Test func theTrayIconIsNamedForTheIndicatorWithPixmapsOnlyWhenNeeded() {
        let found = StatusNotifierItem.icon(busy: true, icons: IconLocation(folder: "/x", isInstalled: false))
        #expect(found["IconName"] == .string("haul-busy"))
        #expect(found["IconPixmap"]?.arrayValue?.isEmpty == true)
        let lost = StatusNotifierItem.icon(busy: false, icons: IconLocation(folder: nil, isInstalled: false))
        #expect(lost["IconName"] == .string("haul"))
        #expect(lost["IconPixmap"] == IconRaster.pixmaps(.idle))
    }
}
