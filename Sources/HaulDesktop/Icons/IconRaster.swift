package import DBusKit

/// Draws a ``HaulIcon`` as the StatusNotifierItem spec's pixmaps: `a(iiay)`, each an image's width, height and
/// ARGB32 pixels in network byte order (A, R, G, B), row by row, not premultiplied. Each pixel is sampled 4×4
/// times, which smooths the edges as well as a vector renderer does at tray sizes.
package enum IconRaster {
    /// Sizes hosts ask for: 16 and 22 (Plasma's and waybar's trays), 24, 32 and 48 (larger panels, HiDPI).
    package static let sizes = [16, 22, 24, 32, 48]
    private static let samples = 4

    /// The icon at `size`×`size` pixels, 4 bytes a pixel.
    package static func argb(_ icon: HaulIcon, size: Int) -> [UInt8] {
        let scale = HaulIcon.viewBox / Double(size)
        let disc = (
            red: Double(icon.discColour >> 16 & 0xFF), green: Double(icon.discColour >> 8 & 0xFF),
            blue: Double(icon.discColour & 0xFF)
        )
        let polygons = icon.polygons
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size * size * 4)
        for row in 0..<size {
            for column in 0..<size {
                var covered = 0
                var white = 0
                for sampleRow in 0..<samples {
                    for sampleColumn in 0..<samples {
                        let point = HaulIcon.Point(
                            (Double(column) + (Double(sampleColumn) + 0.5) / Double(samples)) * scale,
                            (Double(row) + (Double(sampleRow) + 0.5) / Double(samples)) * scale
                        )
                        guard isInsideDisc(point) else { continue }
                        covered += 1
                        if polygons.contains(where: { contains($0, point) }) { white += 1 }
                    }
                }
                guard covered > 0 else {
                    bytes += [0, 0, 0, 0]
                    continue
                }
                // The mean colour of the covered samples; the alpha is how many samples the disc covered.
                let whiteShare = Double(white) / Double(covered)
                func channel(_ value: Double) -> UInt8 { UInt8((value + (255 - value) * whiteShare).rounded()) }
                let alpha = UInt8((255 * Double(covered) / Double(samples * samples)).rounded())
                bytes += [alpha, channel(disc.red), channel(disc.green), channel(disc.blue)]
            }
        }
        return bytes
    }

    /// `IconPixmap`'s value: the icon at every size of ``sizes``.
    package static func pixmaps(_ icon: HaulIcon) -> DBusValue {
        .array(
            StatusNotifierItem.pixmap,
            sizes.map { size in
                .structure([
                    .int32(Int32(size)), .int32(Int32(size)), .array(.byte, argb(icon, size: size).map(DBusValue.byte)),
                ])
            }
        )
    }

    private static func isInsideDisc(_ point: HaulIcon.Point) -> Bool {
        let (centre, radius) = HaulIcon.disc
        let (dx, dy) = (point.x - centre.x, point.y - centre.y)
        return dx * dx + dy * dy <= radius * radius
    }

    /// Even-odd rule: a ray to the right crosses the outline an odd number of times.
    private static func contains(_ polygon: [HaulIcon.Point], _ point: HaulIcon.Point) -> Bool {
        var inside = false
        var previous = polygon[polygon.count - 1]
        for current in polygon {
            if (current.y > point.y) != (previous.y > point.y) {
                let crossing = current.x + (point.y - current.y) * (previous.x - current.x) / (previous.y - current.y)
                if point.x < crossing { inside.toggle() }
            }
            previous = current
        }
        return inside
    }
}
