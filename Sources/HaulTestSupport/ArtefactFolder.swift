package import Foundation

/// Where a host test keeps what it saw (screenshots, logs) so that a person can look after the run:
/// `$HAUL_TEST_ARTEFACTS/<name>` when that is set, else `<temporary folder>/haul-artefacts/<name>`. Emptied when
/// made, kept after the test.
package struct ArtefactFolder: Sendable {
    package let url: URL

    package init(_ name: String) throws {
        let root = ProcessInfo.processInfo.environment["HAUL_TEST_ARTEFACTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("haul-artefacts")
        url = root.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file in the folder.
    package func path(_ file: String) -> String {
        url.appendingPathComponent(file).path
    }
}
