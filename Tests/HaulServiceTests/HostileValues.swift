import DBusKit
import Foundation
import HaulContract

/// The hostile inputs of the fuzz tests. Every URL that could become a running task points at a loopback port where
/// nothing listens (outside the ephemeral range, so no test server can be there); every path a task could write is
/// inside `folder`. URLs with other hosts are kept apart (``strayURLs``): they may only reach hauld with
/// `start-suspended` and are cancelled at once.
struct HostileValues {
    /// A temporary folder of the test's own.
    let folder: String
    /// A small file in `folder`, for uploads.
    let uploadFile: String

    /// NUL-free strings, odd to every layer: empty, blank, controls, bidi overrides, combining marks, joiners,
    /// noncharacters, the last scalar, shell and format metacharacters, escapes, 64 KiB.
    static let strings: [String] = [
        "", " ", "\t\r\n", "\u{1}\u{7}\u{1B}[31m\u{7F}", "\u{FEFF}bom", "\u{202E}txt.exe",
        "e\u{301}\u{302}\u{303}\u{304}",
        "👩‍👩‍👧‍👦🏳️‍🌈", noncharacters, "%00%ff%", "%s%n%x", "\\", "'\";--", "$(id)`id`",
        "<?xml?><a>&amp;</a>", "../../../../etc/passwd", "/", ".", "..", HaulBus.name, ":1.1",
        HaulBus.rootPath.rawValue,
        "𝒽𝒶𝓊𝓁", "ＰＵＴ", "ǅǈǋ", "İı", String(repeating: "é", count: 10_000),
        String(repeating: "a", count: 65_536),
    ]

    /// Noncharacters and the last scalar (which Swift literals may not spell).
    static let noncharacters = String(
        String.UnicodeScalarView([0xFFFE, 0xFFFF, 0xFDD0, 0x10FFFF].compactMap(Unicode.Scalar.init)))

    /// A string larger than anything sane (but well within the bus's message limit).
    static let huge = String(repeating: "h", count: 4 << 20)

    /// URLs with a loopback host (or none, or unparseable) that hauld may accept and start: ports out of range,
    /// odd userinfo, long paths, odd spellings.
    static let loopbackURLs: [String] = {
        let long = String(repeating: "a/", count: 20_000)
        return [
            "http://127.0.0.1:1/", "http://127.0.0.1:65535/x", "http://127.0.0.1:0/", "http://127.0.0.1:65536/",
            "http://127.0.0.1:99999/", "http://127.0.0.1:4294967296/", "http://127.0.0.1:4294967297/",
            "http://127.0.0.1:18446744073709551616/", "http://127.0.0.1:" + String(repeating: "9", count: 400) + "/",
            "https://127.0.0.1:99999/", "https://127.0.0.1:65536/", "http://[::1]:70000/", "http://[::1]:65536/",
            "http://[::1]:1/", "http://[::1]:-1/", "http://[::1]:+1/", "http://[::1/", "http://[::1]]:1/",
            "http://127.0.0.1:-1/", "http://127.0.0.1:+1/", "http://127.0.0.1:1a/", "http://127.0.0.1:0x50/",
            "http://127.0.0.1:/", "http://127.0.0.1::1/", "http://127.0.0.1:1:1/", "http://127.0.0.1:01/",
            "http://alice:s3cret@127.0.0.1:1/", "http://al ice@127.0.0.1:1/", "http://@127.0.0.1:1/",
            "http://:@127.0.0.1:1/", "http://a%00b:c%0d%0a@127.0.0.1:1/", "http://\u{202E}@127.0.0.1:1/",
            "http://ünï:cødé@127.0.0.1:1/", "http://a:b:c@127.0.0.1:1/", "http://%@127.0.0.1:1/",
            "http://127.0.0.1:1/" + long, "http://127.0.0.1:1/?" + long, "http://127.0.0.1:1/#frag",
            "http://127.0.0.1:1/%", "http://127.0.0.1:1/%zz", "http://127.0.0.1:1/ spaces", " http://127.0.0.1:1/ ",
            "HTTP://127.0.0.1:1/", "hTtPs://127.0.0.1:1/", "http://127.0.0.1:1\r\nX: y/", "http://127.0.0.1:1/\u{7F}",
            "http://127.0.0.1:1/ünï/cødé", "http://[::1]:99999/", "http://[::1]:4294967296/",
        ]
    }()

    /// URLs with another host, or none at all, or another scheme. Only ever sent with `start-suspended`.
    static let strayURLs: [String] = [
        "http:///path", "http://", "http:", "http://:1/", "http://[]:1/", "http://[:::]:1/",
        "http://" + String(repeating: "a", count: 300) + ".invalid/",
        "http://" + String(repeating: "a.", count: 3000) + "/",
        "http://-/", "http://%41/", "http://ex ample.invalid/", "http://exa%00mple.invalid/", "http://256.256.256.256/",
        "http://example.invalid:99999/", "http://example.invalid:65536/", "https://example.invalid:4294967296/",
        "http://[fe80::1%25]:1/", "http://[::1%25lo]:99999/", "http://user@:1/", "http://127.0.0.1:1@example.invalid/",
        "ftp://127.0.0.1/", "file:///etc/passwd", "gopher://127.0.0.1:70/", "javascript:alert(1)", "data:text/plain,hi",
        "mailto:a@example.invalid", "//127.0.0.1:1/", "127.0.0.1:1/x", "http:/127.0.0.1/", "ws://127.0.0.1:1/",
        "http://xn--/", "http://xn--zz-zz.invalid/", "https://" + String(repeating: "b", count: 70) + ".invalid:1/",
    ]

    /// Whether `url` may start a task in these tests: no host hauld could reach other than loopback.
    static func staysOnLoopback(_ url: String) -> Bool {
        guard let components = URLComponents(string: url.trimmingCharacters(in: .whitespaces)),
            let host = components.host, !host.isEmpty
        else { return true }
        return ["127.0.0.1", "::1", "[::1]"].contains(host)
    }

    init(folder: String) throws {
        self.folder = folder
        uploadFile = folder + "/upload.bin"
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: uploadFile))
    }

    /// Download destinations: odd names inside `folder`, and outside it only paths that can never be written
    /// (relative, a missing folder, a directory, names too long).
    var destinations: [String] {
        [
            "relative", "relative/x", "./x", "../x", "", "/", "//", folder, folder + "/",
            folder + "/../" + lastFolder + "/a",
            folder + "/./b", folder + "//c", folder + "/nonexistent/d",
            folder + "/" + String(repeating: "n", count: 255),
            folder + "/" + String(repeating: "n", count: 256),
            folder + "/" + String(repeating: "d/", count: 3000) + "x",
            folder + "/ünï cødé \u{202E}gpj.exe", folder + "/new\nline", folder + "/.haul-partial",
            folder + "/x.haul-partial",
            folder + "/" + String(repeating: "../", count: 50) + "nonexistent-haul/x", "/proc/self/nonexistent/x",
            "/proc/self/fd", "/nonexistent-haul-folder/x", folder + "/upload.bin/x",
        ] + Self.strings.map { folder + "/" + $0 }
    }

    /// Existing files outside `folder`: a download to one is refused (FileExists) unless `overwrite`, which these
    /// tests never combine with them.
    static let existingFiles = ["/proc/self/status", "/dev/null", "/etc/hostname"]

    /// Upload sources: devices, directories, `/proc` files, relative and missing paths.
    var sources: [String] {
        [
            uploadFile, folder + "/../" + lastFolder + "/upload.bin", "/proc/self/status", "/proc/self/environ",
            "/proc/self/cmdline", "/dev/zero", "/dev/null", "/etc", folder, "/nonexistent-haul-file", "relative", "",
            folder + "/" + String(repeating: "s/", count: 3000) + "x", "/proc/self/fd/0",
        ]
    }

    private var lastFolder: String { URL(fileURLWithPath: folder).lastPathComponent }

    /// Header maps: line breaks, empty and odd names, non-ASCII, many and long entries.
    static let headerMaps: [[String: String]] = [
        ["X-A": "a\r\nInjected: 1"], ["X-A": "a\nb"], ["X-A": "a\rb"], ["": "x"], ["Bad Name": "x"], ["X:Y": "x"],
        ["X-Ünï": "x"], ["X-A": "ünïcødé \u{202E}"], ["X-A": String(repeating: "v", count: 65_536)],
        ["\u{7F}": "x"], ["X-A\t": "x"], ["(": ")"],
        Dictionary(uniqueKeysWithValues: (0..<2000).map { ("X-\($0)", "\($0)") }),
    ]

    /// `a{sv}` option maps of wrong types, out-of-range numbers, unknown and odd keys.
    static let optionMaps: [[String: DBusValue]] =
        [
            download(.maxRetries, .int32(-1)), download(.maxRetries, .int64(.min)),
            download(.maxRetries, .uint64(.max)),
            download(.maxRetries, .double(.nan)), download(.maxRetries, .double(.infinity)),
            download(.maxRetries, .double(-.infinity)), download(.maxRetries, .double(1e308)),
            download(.maxRetries, .string("5")), download(.maxRetries, .byte(255)),
            download(.overwrite, .string("true")), download(.overwrite, .int32(1)),
            download(.overwrite, .variant(.boolean(true))),
            download(.startSuspended, .uint32(1)), download(.startSuspended, .array(.boolean, [.boolean(true)])),
            download(.sha256, .string(String(repeating: "g", count: 64))),
            download(.sha256, .string(String(repeating: "0", count: 63))),
            download(.sha256, .string(String(repeating: "٠", count: 64))),
            download(.sha256, .string(String(repeating: "F", count: 65))),
            download(.sha256, .uint64(0)), download(.headers, .array(.string, [])),
            download(.headers, .vardict(["X-A": .string("a")])),
            download(.headers, .string("X-A: a")), ["delay": .double(.nan)], ["activation-delay": .double(-1)],
            ["": .string("")],
            [String(repeating: "k", count: 100_000): .boolean(true)], ["\u{202E}": .boolean(true)],
            upload(.method, .string("GET")), upload(.method, .string("ＰＵＴ")), upload(.method, .string("")),
            upload(.method, .int32(0)),
        ] + headerMaps.map { download(.headers, .stringDictionary($0)) }

    /// A map of one download option.
    static func download(_ option: DownloadOption, _ value: DBusValue) -> [String: DBusValue] {
        DownloadOption.values([option: value])
    }

    /// A map of one upload option.
    static func upload(_ option: UploadOption, _ value: DBusValue) -> [String: DBusValue] {
        UploadOption.values([option: value])
    }
}
