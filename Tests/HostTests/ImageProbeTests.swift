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
}
