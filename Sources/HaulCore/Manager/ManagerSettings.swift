package import FoundationEssentials

/// The Manager's read-write settings, kept across restarts in `manager.json` beside the indicator's settings.
package struct ManagerSettings: Codable, Sendable, Equatable {
    /// Connections a new download uses when its options do not say (`DefaultConnections`): one per server, the
    /// polite default.
    package var defaultConnections: UInt32 = 1

    package init() {}

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        defaultConnections = try container.decodeIfPresent(UInt32.self, forKey: .defaultConnections) ?? 1
        guard DownloadOptions.connectionRange.contains(defaultConnections) else {
            throw DecodingError.dataCorruptedError(
                forKey: .defaultConnections, in: container, debugDescription: "must be between 1 and 16"
            )
        }
    }

    /// Reads the settings at `url`: the defaults when there is no file, and with a sentence when it cannot be used.
    package static func load(from url: URL) -> (settings: ManagerSettings, problem: String?) {
        guard let data = try? Data(contentsOf: url) else {
            let exists = FileManager.default.fileExists(atPath: url.path(percentEncoded: false))
            return (ManagerSettings(), exists ? "cannot read \(url.path(percentEncoded: false)); using defaults" : nil)
        }
        do {
            return (try JSONDecoder().decode(ManagerSettings.self, from: data), nil)
        } catch {
            return (ManagerSettings(), "unusable \(url.path(percentEncoded: false)) (\(error)); using defaults")
        }
    }

    package func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(self), to: url)
    }
}
