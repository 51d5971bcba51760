/// Haul's own icons, named after the application and installed into the `hicolor` theme from
/// `integrations/icons/`: `haul` while idle and `haul-busy` while transferring, in full colour for the tray icon,
/// the KDE jobs and the notifications, and `haul-symbolic` and `haul-busy-symbolic` for panels that draw
/// monochrome icons (GNOME's top bar). A theme need not have any generic icon for them: Breeze has no
/// `network-transmit-receive`, and Plasma drew an empty tray slot for it.
///
/// The full-colour icons are also described here, shape by shape, for hosts that cannot find the files
/// (``IconRaster`` draws them as `IconPixmap`): a disc with white polygons on it, in a 32×32 view box. A test
/// holds the SVG files to the same shapes.
package enum HaulIcon: CaseIterable, Sendable {
    case idle
    case busy

    /// A point of the 32×32 view box.
    package struct Point: Equatable, Sendable {
        package var x: Double
        package var y: Double

        package init(_ x: Double, _ y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The icon for the activity indicator's visibility.
    package init(busy: Bool) { self = busy ? .busy : .idle }

    /// The name in the icon theme.
    package var name: String {
        switch self {
        case .idle: "haul"
        case .busy: "haul-busy"
        }
    }

    /// The view box's side.
    package static let viewBox = 32.0
    /// The disc behind the arrows: centre and radius.
    package static let disc = (centre: Point(16, 16), radius: 15.0)

    /// The disc's colour, 0xRRGGBB: Tango's blue while idle, its orange while busy (a pair that colour-blind eyes
    /// tell apart too, and the busy icon has two arrows besides).
    package var discColour: UInt32 {
        switch self {
        case .idle: 0x3465A4
        case .busy: 0xF57900
        }
    }

    /// The white shapes on the disc: idle, an arrow down onto a bar; busy, an arrow down and one up.
    package var polygons: [[Point]] {
        switch self {
        case .idle:
            [
                [.init(13, 6), .init(19, 6), .init(19, 15), .init(24, 15), .init(16, 23), .init(8, 15), .init(13, 15)],
                [.init(9, 24.5), .init(23, 24.5), .init(23, 27), .init(9, 27)],
            ]
        case .busy:
            [
                [
                    .init(8.5, 7), .init(12.5, 7), .init(12.5, 16), .init(16, 16), .init(10.5, 24), .init(5, 16),
                    .init(8.5, 16),
                ],
                [
                    .init(19.5, 25), .init(23.5, 25), .init(23.5, 16), .init(27, 16), .init(21.5, 8), .init(16, 16),
                    .init(19.5, 16),
                ],
            ]
        }
    }
}
