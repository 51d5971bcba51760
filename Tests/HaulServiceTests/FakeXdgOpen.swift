import Foundation
import HaulTestSupport
import Testing

/// An `xdg-open` for hauld's `PATH` that notes what it was asked to open, one line each, in a folder of its own.
struct FakeXdgOpen {
    let folder: URL
    private var record: URL { folder.appendingPathComponent("opened") }

    init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-xdg-open-\(UUID().uuidString)")
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        // Written by a shell of its own: a file this process had open for writing could leak into a child another
        // test spawns meanwhile, and exec'ing it would then fail with ETXTBSY.
        let script = "#!/bin/sh\nprintf '%s\\n' \"$1\" >> \"\(record.path)\"\n"
        let written = try await Command.run(
            "/bin/sh", ["-c", "cat > \"$0\" && chmod 755 \"$0\"", bin.appendingPathComponent("xdg-open").path],
            input: script
        )
        #expect(written.status == 0, "\(written.stderr)")
    }

    /// hauld's environment: this `xdg-open` first on its `PATH`.
    var environment: [String: String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return ["PATH": folder.appendingPathComponent("bin").path + ":" + path]
    }

    /// What it opened so far, in order.
    var opened: [String] {
        ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}
