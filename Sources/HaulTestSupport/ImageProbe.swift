/// Looks at a screenshot the way a test can check it: the size, the mean colour of a rectangle, the text in it.
/// ImageMagick reads the pixels and tesseract the text (both installed by `scripts/install-deps.sh test`).
package enum ImageProbe {
    /// An area of an image, in pixels from the top left corner.
    package struct Rectangle: Sendable, Equatable, CustomStringConvertible {
        package var x, y, width, height: Int

        package init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        /// ImageMagick's geometry, `WxH+X+Y`.
        package var description: String { "\(width)x\(height)+\(x)+\(y)" }
    }

    /// A colour, each channel from 0 to 255.
    package struct Color: Sendable, Equatable, CustomStringConvertible {
        package var red, green, blue: Double

        package init(red: Double, green: Double, blue: Double) {
            (self.red, self.green, self.blue) = (red, green, blue)
        }

        /// The largest difference of one channel: 0 for the same colour, 255 for black against white.
        package func distance(to other: Color) -> Double {
            max(abs(red - other.red), abs(green - other.green), abs(blue - other.blue))
        }

        package var description: String { "rgb(\(Int(red)),\(Int(green)),\(Int(blue)))" }
    }

    package static let convert = "/usr/bin/convert"
    package static let identify = "/usr/bin/identify"

    /// Width and height of the image.
    package static func size(of image: String) async throws -> (width: Int, height: Int) {
        let result = try await Command.run(identify, ["-format", "%w %h", image])
        let numbers = result.stdout.split(separator: " ").compactMap { Int($0) }
        guard result.status == 0, numbers.count == 2 else {
            throw TestSupportError("identify \(image): \(result.stderr)")
        }
        return (numbers[0], numbers[1])
    }

    /// The mean colour of `area` (the whole image when nil).
    package static func meanColor(of image: String, in area: Rectangle? = nil) async throws -> Color {
        var arguments = [image]
        if let area { arguments += ["-crop", area.description, "+repage"] }
        let channels = "%[fx:255*mean.r] %[fx:255*mean.g] %[fx:255*mean.b]"
        arguments += ["-alpha", "off", "-colorspace", "sRGB", "-format", channels, "info:"]
        let result = try await Command.run(convert, arguments)
        let means = result.stdout.split(separator: " ").compactMap { Double($0) }
        guard result.status == 0, means.count == 3 else {
            throw TestSupportError("convert \(image) (\(area?.description ?? "all")): \(result.stderr)")
        }
        return Color(red: means[0], green: means[1], blue: means[2])
    }

    /// How much the pixels of `area` vary: the standard deviation of its grey levels, 0 for a flat colour. A drawn
    /// icon or text varies; an empty panel does not.
    package static func variation(of image: String, in area: Rectangle? = nil) async throws -> Double {
        var arguments = [image]
        if let area { arguments += ["-crop", area.description, "+repage"] }
        arguments += ["-alpha", "off", "-colorspace", "Gray", "-format", "%[fx:255*standard_deviation]", "info:"]
        let result = try await Command.run(convert, arguments)
        guard result.status == 0, let deviation = Double(result.stdout.trimmingWhitespace) else {
            throw TestSupportError("convert \(image) (\(area?.description ?? "all")): \(result.stderr)")
        }
        return deviation
    }

    /// The text tesseract reads in `area` (the whole image when nil), enlarged first: panel text is small.
    /// `lightText`: the text is light on a dark ground (GNOME's banners), which tesseract may not read as it is.
    package static func text(in image: String, area: Rectangle? = nil, lightText: Bool = false) async throws -> String {
        let enlarged = try await enlarged(image, area: area, lightText: lightText)
        let result = try await Command.run("tesseract", [enlarged, "stdout"])
        guard result.status == 0 else { throw TestSupportError("tesseract \(image): \(result.stderr)") }
        return result.stdout
    }

    /// Where tesseract reads `phrase` (its words in a row, on one line, each perhaps with a stray mark read at its
    /// ends) in `area`: the middle of the phrase, in the image's coordinates, for a click; nil when it reads no such
    /// words.
    package static func locate(
        _ phrase: String, in image: String, area: Rectangle? = nil, lightText: Bool = false
    ) async throws -> (x: Int, y: Int)? {
        let enlarged = try await enlarged(image, area: area, lightText: lightText)
        let result = try await Command.run("tesseract", [enlarged, "stdout", "tsv"])
        guard result.status == 0 else { throw TestSupportError("tesseract \(image): \(result.stderr)") }
        let words = result.stdout.split(separator: "\n").compactMap(ReadWord.init)
        let wanted = phrase.split(separator: " ").map(String.init)
        guard !wanted.isEmpty, words.count >= wanted.count else { return nil }
        for start in 0...(words.count - wanted.count) {
            let run = words[start..<(start + wanted.count)]
            guard zip(run, wanted).allSatisfy({ $0.text == $1 }), Set(run.map(\.line)).count == 1 else { continue }
            let left = run.map(\.left).min() ?? 0
            let right = run.map { $0.left + $0.width }.max() ?? 0
            let top = run.map(\.top).min() ?? 0
            let bottom = run.map { $0.top + $0.height }.max() ?? 0
            // Back from the enlargement, into the image.
            let middle = (x: (left + right) / (2 * enlargement), y: (top + bottom) / (2 * enlargement))
            return ((area?.x ?? 0) + middle.x, (area?.y ?? 0) + middle.y)
        }
        return nil
    }

    /// How much larger tesseract is given an image: panel text is small.
    private static let enlargement = 3

    /// `area` of `image` in grey and ``enlargement`` times as large, beside the image; light text made black on white
    /// (what is lighter than mid-grey becomes the text).
    private static func enlarged(_ image: String, area: Rectangle?, lightText: Bool) async throws -> String {
        let enlarged = image + ".ocr.png"
        var arguments = [image]
        if let area { arguments += ["-crop", area.description, "+repage"] }
        arguments += ["-alpha", "off", "-colorspace", "Gray", "-resize", "\(enlargement * 100)%"]
        if lightText { arguments += ["-threshold", "50%", "-negate"] }
        arguments.append(enlarged)
        let prepared = try await Command.run(convert, arguments)
        guard prepared.status == 0 else { throw TestSupportError("convert \(image): \(prepared.stderr)") }
        return enlarged
    }

    /// A word of tesseract's TSV output: level 5 rows, `level page block paragraph line word left top width height
    /// confidence text`.
    private struct ReadWord {
        let line: [Int]
        let left, top, width, height: Int
        let text: String

        init?(_ row: Substring) {
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 12, fields[0] == "5" else { return nil }
            let numbers = fields[1...9].compactMap { Int($0) }
            guard numbers.count == 9 else { return nil }
            line = Array(numbers[1...3])
            (left, top, width, height) = (numbers[5], numbers[6], numbers[7], numbers[8])
            // A border or a shadow beside a word is often read as a quote or a bar stuck to it.
            let isMark = { (character: Character) in !character.isLetter && !character.isNumber }
            text = String(fields[11].drop(while: isMark).reversed().drop(while: isMark).reversed())
        }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
