import HaulTestSupport
import Testing

/// The host tests judge screenshots with ImageProbe: it must see colours where they are and read drawn text.
@Suite(.timeLimit(.minutes(1))) struct ImageProbeTests {
    /// ImageMagick's default font (Helvetica from Ghostscript) is not installed; DejaVu is.
    static let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    /// A 200×80 picture: red on the left half, white on the right with "Haul 42" written in black.
    static func picture(in folder: ArtefactFolder) async throws -> String {
        let path = folder.path("probe.png")
        let result = try await Command.run(
            ImageProbe.convert,
            [
                "-size", "200x80", "xc:white", "-fill", "red", "-draw", "rectangle 0,0 99,79", "-fill", "black",
                "-font", Self.font, "-pointsize", "20", "-annotate", "+105+48", "Haul 42", path,
            ]
        )
        try #require(result.status == 0, "\(result.stderr)")
        return path
    }

    @Test func itSeesTheColourOfAnAreaAndWhetherAnythingIsDrawnThere() async throws {
        let image = try await Self.picture(in: ArtefactFolder("image-probe-colours"))
        let size = try await ImageProbe.size(of: image)
        #expect(size.width == 200 && size.height == 80)
        let red = try await ImageProbe.meanColor(of: image, in: .init(x: 0, y: 0, width: 100, height: 80))
        #expect(red.distance(to: .init(red: 255, green: 0, blue: 0)) < 1)
        let blank = ImageProbe.Rectangle(x: 100, y: 0, width: 100, height: 20)
        #expect(try await ImageProbe.variation(of: image, in: blank) < 1)
        let written = ImageProbe.Rectangle(x: 100, y: 20, width: 100, height: 40)
        #expect(try await ImageProbe.variation(of: image, in: written) > 10)
    }

    @Test func itReadsTheTextOfAnArea() async throws {
        let image = try await Self.picture(in: ArtefactFolder("image-probe-text"))
        let text = try await ImageProbe.text(in: image, area: .init(x: 100, y: 0, width: 100, height: 80))
        #expect(text.contains("Haul 42"), "read: \(text)")
    }

    @Test func itFindsWhereAPhraseIsWritten() async throws {
        let image = try await Self.picture(in: ArtefactFolder("image-probe-locate"))
        let area = ImageProbe.Rectangle(x: 100, y: 0, width: 100, height: 80)
        let found = try await ImageProbe.locate("Haul 42", in: image, area: area)
        // Drawn from x 105 on a baseline at y 48, 20 points high: about 80 wide, its middle near 145, 41.
        let point = try #require(found)
        #expect((130...160).contains(point.x) && (33...48).contains(point.y), "\(point)")
        #expect(try await ImageProbe.locate("Haul 43", in: image, area: area) == nil)
    }

    /// Light text on a dark ground, as GNOME draws its banners: read once made dark on light.
    @Test func itReadsLightTextOnADarkGround() async throws {
        let path = try ArtefactFolder("image-probe-light").path("light.png")
        let drawn = try await Command.run(
            ImageProbe.convert,
            [
                "-size", "320x80", "xc:#404040", "-fill", "#f0f0f0", "-font", Self.font, "-pointsize", "16",
                "-annotate", "+20+48", "Show in folder", path,
            ]
        )
        try #require(drawn.status == 0, "\(drawn.stderr)")
        #expect(try await ImageProbe.text(in: path, lightText: true).contains("Show in folder"))
        let found = try await ImageProbe.locate("Show in folder", in: path, lightText: true)
        #expect(found.map { (40...140).contains($0.x) && (30...50).contains($0.y) } == true, "\(String(describing: found))")
    }
}
