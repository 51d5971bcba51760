import Foundation
import HaulCore
import HaulTestSupport
import Testing

/// Names from hostile servers and clients: whatever comes in, one safe path component comes out.
@Suite(.timeLimit(.minutes(2))) struct FileNameTests {
    // MARK: Content-Disposition

    @Test(arguments: [
        ("attachment; filename=report.pdf", "report.pdf"),
        ("attachment; filename=\"annual report.pdf\"", "annual report.pdf"),
        ("ATTACHMENT; FILENAME = \"a.txt\" ; size=3", "a.txt"),
        ("inline; filename=\"say \\\"hi\\\".txt\"", "say \"hi\".txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=utf-8'en'na%C3%AFve.txt", "naïve.txt"),
        ("attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
        ("attachment; filename=\"plain.txt\"; filename*=UTF-8''fancy%C3%A9.txt", "fancyé.txt"),
        ("attachment; filename*=UTF-8''fancy.txt; filename=\"plain.txt\"", "fancy.txt"),
        ("attachment; filename=\"first.txt\"; filename=\"second.txt\"", "first.txt"),
        ("filename=bare.txt", "bare.txt"),
        ("attachment; filename=\"semi;colon.txt\"", "semi;colon.txt"),
        ("attachment; filename=\"unterminated.txt", "unterminated.txt"),
    ])
    func contentDispositionNames(_ header: String, _ expected: String) {
        #expect(ContentDisposition.fileName(header) == expected)
    }

    /// A `filename*` that cannot be decoded gives way to `filename`; with nothing usable there is no name.
    @Test(arguments: [
        ("attachment; filename*=UTF-8''%FF%FE.txt; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename*=KOI8-R''%F0.txt; filename=fallback.txt", "fallback.txt"),
        ("attachment; filename*=UTF-8''%G1.txt; filename=fallback.txt", "fallback.txt"),
        ("attachment; filename*=no-quotes.txt; filename=fallback.txt", "fallback.txt"),
    ])
    func undecodableExtendedNamesFallBack(_ header: String, _ expected: String) {
        #expect(ContentDisposition.fileName(header) == expected)
    }

    @Test(arguments: [
        "attachment", "inline", "", ";;;", "attachment; filename=", "attachment; filename=\"\"", "=", "\"",
    ])
    func headersWithoutAName(_ header: String) {
        #expect(ContentDisposition.fileName(header) == nil)
    }

    // MARK: Safe names

    @Test(arguments: [
        ("../../.bashrc", "bashrc"),
        ("/etc/passwd", "passwd"),
        ("dir/sub/", "sub"),
        ("..", nil),
        (".", nil),
        ("", nil),
        ("   ", nil),
        ("...hidden", "hidden"),
        ("  spaced name.txt  ", "spaced name.txt"),
        ("trailing dots...", "trailing dots"),
        ("a\u{0}b.txt", "a_b.txt"),
        ("tab\there\r\n.txt", "tab_here__.txt"),
        ("C:\\Windows\\evil.exe", "C:_Windows_evil.exe"),
        ("bell\u{7}\u{1B}[31m.txt", "bell__[31m.txt"),
        ("c1\u{85}\u{9B}.txt", "c1__.txt"),
        ("invoice\u{202E}fdp.exe", "invoice_fdp.exe"),
        ("résumé 📄.pdf", "résumé 📄.pdf"),
    ] as [(String, String?)])
    func safeNames(_ suggested: String, _ expected: String?) {
        #expect(SafeFileName.make(suggested) == expected)
    }

    /// Whatever bytes come in, nothing that changes folders or hides the file comes out.
    @Test func randomNamesStaySafe() {
        var generator = SplitMix64(seed: 19)
        let alphabet: [Character] = [
            "/", ".", "\\", "\u{0}", "\n", " ", "a", "é", "\u{202E}", "\u{1}", "z", "-", "\u{7F}",
        ]
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &generator)
            let name = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let safe = SafeFileName.make(name) else { continue }
            #expect(!safe.isEmpty && safe != "." && safe != "..")
            #expect(!safe.contains("/") && !safe.utf8.contains(0) && !safe.contains("\\"))
            #expect(!safe.hasPrefix(".") && !safe.hasPrefix(" ") && !safe.hasSuffix(".") && !safe.hasSuffix(" "))
            #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" })
            #expect(safe.utf8.count <= SafeFileName.maximumBytes)
        }
    }

    /// A 4 KiB name is cut to what the file system takes with the partial file's suffix, on a character boundary,
    /// keeping its extension.
    @Test(arguments: ["a", "é", "👩‍👩‍👧", "e\u{301}"])
    func longNamesAreCutKeepingTheExtension(_ unit: String) throws {
        let stem = String(repeating: unit, count: 4096 / unit.utf8.count)
        let safe = try #require(SafeFileName.make(stem + ".tar.gz"))
        #expect(safe.hasSuffix(".tar.gz"))
        #expect(safe.utf8.count <= SafeFileName.maximumBytes)
        #expect(safe.utf8.count + SafeFileName.partialSuffix.utf8.count <= 255)
        #expect(safe.utf8.count > SafeFileName.maximumBytes - unit.utf8.count)
        // Whole characters only: the cut stem is a run of the unit.
        #expect(safe.dropLast(7).allSatisfy { String($0) == unit })
    }

    @Test(arguments: [
        ("notes.txt", "notes", ".txt"),
        ("archive.tar.gz", "archive", ".tar.gz"),
        ("ARCHIVE.TAR.XZ", "ARCHIVE", ".TAR.XZ"),
        ("no extension", "no extension", ""),
        ("version 2.5 notes", "version 2.5 notes", ""),
        ("a.b.c", "a.b", ".c"),
        ("file.with space", "file.with space", ""),
        ("tar.gz", "tar", ".gz"),
    ])
    func extensions(_ name: String, _ stem: String, _ ext: String) {
        #expect(FileNameParts(name) == FileNameParts(stem: stem, extension: ext))
    }

    // MARK: Choosing and numbering

    @Test func theHeaderComesFirstThenTheHintThenTheURL() throws {
        let url = try #require(URL(string: "http://127.0.0.1/files/the%20segment.bin?x=1"))
        let header = "attachment; filename=\"from-header.bin\""
        #expect(FileNameChoice.name(contentDisposition: header, hint: "hint.bin", finalURL: url) == "from-header.bin")
        #expect(FileNameChoice.name(contentDisposition: "attachment", hint: "hint.bin", finalURL: url) == "hint.bin")
        #expect(FileNameChoice.name(contentDisposition: nil, hint: nil, finalURL: url) == "the segment.bin")
        // A candidate that leaves nothing safe gives way to the next.
        #expect(FileNameChoice.name(contentDisposition: "attachment; filename=..", hint: "../", finalURL: url)
            == "the segment.bin")
    }

    @Test(arguments: [
        ("http://127.0.0.1/", "download"),
        ("http://127.0.0.1/dir/", "dir"),
        ("http://127.0.0.1/a/b//", "b"),
        ("http://127.0.0.1/%2E%2E", "download"),
        ("http://127.0.0.1/x/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "passwd"),
        ("http://127.0.0.1/bad%FF.bin", "bad%FF.bin"),
        ("http://127.0.0.1/nul%00.bin", "nul_.bin"),
    ])
    func namesFromTheURL(_ url: String, _ expected: String) throws {
        let url = try #require(URL(string: url))
        #expect(FileNameChoice.name(contentDisposition: nil, hint: nil, finalURL: url) == expected)
    }

    @Test func takenNamesAreNumberedBeforeTheExtension() {
        let taken: Set = ["a.tar.gz", "a (1).tar.gz", "b", "c.txt"]
        #expect(FileNameChoice.available("a.tar.gz") { taken.contains($0) } == "a (2).tar.gz")
        #expect(FileNameChoice.available("b") { taken.contains($0) } == "b (1)")
        #expect(FileNameChoice.available("free.txt") { taken.contains($0) } == "free.txt")
        #expect(FileNameChoice.available("c.txt", limit: 3) { _ in true } == nil)
    }

    @Test func aNumberedLongNameStillFits() throws {
        let long = try #require(SafeFileName.make(String(repeating: "x", count: 4096) + ".iso"))
        let numbered = try #require(FileNameChoice.available(long) { $0 == long })
        #expect(numbered.hasSuffix(" (1).iso"))
        #expect(numbered.utf8.count <= SafeFileName.maximumBytes)
    }

    // MARK: Destinations

    @Test func foldersAndFilesAsDestinations() throws {
        try withTemporaryDirectory { directory throws in
            let folder = directory.path
            let downloads: () throws(TransferRequestError) -> String = { folder + "/Downloads" }
            #expect(
                try DownloadDestination("", downloadsFolder: downloads) == .folder(LocalPath(folder: folder + "/Downloads"))
            )
            #expect(try DownloadDestination(folder, downloadsFolder: downloads).isFolder)
            #expect(try DownloadDestination(folder + "/", downloadsFolder: downloads).isFolder)
            #expect(try DownloadDestination(folder + "/not-yet/", downloadsFolder: downloads).isFolder)
            #expect(
                try DownloadDestination(folder + "/file.bin", downloadsFolder: downloads)
                    == .file(LocalPath(folder + "/file.bin"))
            )
            #expect(throws: TransferRequestError.self) {
                try DownloadDestination("relative/", downloadsFolder: downloads)
            }
            #expect(DownloadDestination.file(named: "a.txt", in: "/") == "/a.txt")
            #expect(DownloadDestination.file(named: "a.txt", in: folder) == folder + "/a.txt")
        }
    }

    // MARK: Who asked

    @Test(arguments: [
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-1234.scope\n", "firefox"),
        ("0::/user.slice/user@1000.service/app.slice/app-org.kde.dolphin-5f2c9a.scope", "org.kde.dolphin"),
        ("0::/user.slice/user@1000.service/app.slice/app-org.kde.dolphin@5f2c9a.service", "org.kde.dolphin"),
        ("0::/user.slice/user@1000.service/app.slice/app-org.gnome.Terminal.service", "org.gnome.Terminal"),
        ("0::/app.slice/app-flatpak-org.mozilla.firefox-77.scope", "org.mozilla.firefox"),
        ("0::/app.slice/app-gnome-google\\x2dchrome-99.scope", "google-chrome"),
        ("0::/app.slice/app-gnome-google-chrome-99.scope", "google-chrome"),
        ("12:cpu:/x\n0::/app.slice/app-kde-org.kde.okular-3.scope/sub", "org.kde.okular"),
    ])
    func appUnits(_ cgroup: String, _ expected: String) {
        #expect(CallerApplication.systemdAppID(cgroup: cgroup) == expected)
    }

    @Test(arguments: [
        "0::/user.slice/user@1000.service/app.slice/vte-spawn-1a2b.scope",
        "0::/user.slice/user@1000.service/app.slice/run-u12.scope",
        "0::/user.slice/user@1000.service/app.slice/dbus.service",
        "0::/init.scope", "", "garbage", "0::/app-.scope", "0::/app--1.scope",
        "0::/app-gnome-evil\\x2fpath-1.scope", "0::/app-gnome-bad\\x0aline-1.scope", "0::/app-gnome-\\xff-1.scope",
        "0::/app-" + String(repeating: "x", count: 300) + "-1.scope",
    ])
    func notAnAppUnit(_ cgroup: String) {
        #expect(CallerApplication.systemdAppID(cgroup: cgroup) == nil)
    }

    @Test func flatpakInfo() {
        let info = "[Instance]\nname=not-this\n\n[Application]\nname=org.mozilla.firefox\nruntime=runtime/x\n"
        #expect(CallerApplication.flatpakAppID(info) == "org.mozilla.firefox")
        #expect(CallerApplication.flatpakAppID("[Application]\nname=\n") == nil)
        #expect(CallerApplication.flatpakAppID("[Application]\nname=a/b\n") == nil)
        #expect(CallerApplication.flatpakAppID("name=org.x.Y\n") == nil)
        #expect(CallerApplication.flatpakAppID("") == nil)
    }

    @Test func commandNames() {
        #expect(CallerApplication.commandName("haul\n") == "haul")
        #expect(CallerApplication.commandName("evil\u{1B}[2J\n") == nil)
        #expect(CallerApplication.commandName("\n") == nil)
        #expect(CallerApplication.claimed("org.mozilla.firefox") == "org.mozilla.firefox")
        #expect(CallerApplication.claimed("two words") == nil)
        #expect(CallerApplication.claimed(String(repeating: "a", count: 256)) == nil)
    }
}
