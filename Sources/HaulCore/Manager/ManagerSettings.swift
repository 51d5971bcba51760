package import FoundationEssentials

/// The Manager's read-write settings, kept across restarts in `manager.json` beside the indicator's settings (the
/// file's format: `ManagerSettings+Coding.swift`).
package struct ManagerSettings: Sendable, Equatable {
    /// Connections a new download uses when its options do not say (`DefaultConnections`): one per server, the
    /// polite default.
    package var defaultConnections: UInt32 = 1
    /// Bytes per second for all downloads together (`DownloadRateLimit`; 0: none), within ``RateLimitRule``.
    package var downloadRateLimit: UInt64 = 0
    /// Bytes per second for all uploads together (`UploadRateLimit`; 0: none), within ``RateLimitRule``.
    package var uploadRateLimit: UInt64 = 0
    /// How many tasks transfer at once (`MaxRunningTasks`; 0: no limit).
    package var maxRunningTasks: UInt32 = 5
    /// Keep the machine from sleeping while foreground tasks run (`InhibitSleep`).
    package var inhibitSleep = false

    package init() {}

    /// Reads the settings at `url`: the defaults when there is no file, and with a sentence when it cannot be used
    /// (``RegularFile`` says what is read).
    package static func load(from url: URL) -> (settings: ManagerSettings, problem: String?) {
        let data: Data
        do {
            data = try RegularFile.contents(of: url.path(percentEncoded: false), limit: RegularFile.largestSettings)
        } catch {
            guard !error.isMissing else { return (ManagerSettings(), nil) }
            return (ManagerSettings(), "cannot read manager settings: \(error); using defaults")
        }
        do {
            return (try JSONDecoder().decode(ManagerSettings.self, from: data), nil)
        } catch {
            return (ManagerSettings(), "unusable \(url.path(percentEncoded: false)) (\(error)); using defaults")
        }
    }

    package func save(to url: URL) throws {
        try AtomicFile.write(try encoded(), to: url)
    }

    /// The same on `writer`'s thread: returns once the file is durable, having blocked no caller's thread.
    package func save(to url: URL, with writer: TaskRecordWriter) async throws {
        try await writer.write(try encoded(), to: url)
    }

    private func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}
