package import FoundationEssentials

/// Loads and saves ``IndicatorSettings`` as a JSON file.
///
/// Loading never fails: the daemon must start whatever is on disk. A missing file gives the defaults silently; a file
/// that cannot be read, decoded or validated gives the defaults together with a ``LoadProblem`` for the owner to log.
/// The bad file is left in place until the next ``save(_:)`` replaces it.
package struct IndicatorSettingsStore: Sendable {
    /// Why the file's contents were not used.
    package enum LoadProblem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file exists but could not be read (permissions, a directory, FIFO or link in its place, a file larger
        /// than a settings file, an I/O error).
        case unreadable(path: String, reason: String)
        /// The file is not JSON, or not JSON of the expected shape.
        case corrupt(path: String, reason: String)
        /// The file decoded, but holds a delay out of range.
        case invalid(path: String, IndicatorSettings.InvalidDelay)

        package var description: String {
            switch self {
            case .unreadable(let path, let reason):
                "cannot read indicator settings \(path): \(reason); using defaults"
            case .corrupt(let path, let reason):
                "corrupt indicator settings \(path): \(reason); using defaults"
            case .invalid(let path, let error):
                "invalid indicator settings \(path): \(error); using defaults"
            }
        }
    }

    /// The outcome of ``load()``: settings that are always valid, and why they are the defaults when a file was
    /// there but unusable.
    package struct LoadResult: Sendable, Equatable {
        /// Valid settings: the file's, or the defaults.
        package var settings: IndicatorSettings
        /// Set when the file existed but its contents were not used.
        package var problem: LoadProblem?

        /// Creates a result.
        package init(settings: IndicatorSettings, problem: LoadProblem? = nil) {
            self.settings = settings
            self.problem = problem
        }
    }

    /// The JSON file.
    package let url: URL

    /// Creates a store for the JSON file at `url`; nothing is read until ``load()``.
    package init(url: URL) {
        self.url = url
    }

    /// Reads the settings, falling back to the defaults as described on the type.
    package func load() -> LoadResult {
        let path = url.path(percentEncoded: false)
        let data: Data
        do {
            data = try RegularFile.contents(of: path, limit: RegularFile.largestSettings)
        } catch {
            guard !error.isMissing else { return LoadResult(settings: IndicatorSettings()) }
            return LoadResult(settings: IndicatorSettings(), problem: .unreadable(path: path, reason: "\(error)"))
        }
        let settings: IndicatorSettings
        do {
            settings = try JSONDecoder().decode(IndicatorSettings.self, from: data)
        } catch {
            return LoadResult(settings: IndicatorSettings(), problem: .corrupt(path: path, reason: "\(error)"))
        }
        do {
            try settings.validate()
        } catch {
            return LoadResult(settings: IndicatorSettings(), problem: .invalid(path: path, error))
        }
        return LoadResult(settings: settings)
    }

    /// Validates `settings` and writes them with ``AtomicFile``.
    ///
    /// Throws ``IndicatorSettings/InvalidDelay`` (nothing is written) or ``AtomicFileError``.
    package func save(_ settings: IndicatorSettings) throws {
        try AtomicFile.write(try Self.encoded(settings), to: url)
    }

    /// The same on `writer`'s thread: returns once the file is durable, having blocked no caller's thread.
    package func save(_ settings: IndicatorSettings, with writer: TaskRecordWriter) async throws {
        try await writer.write(try Self.encoded(settings), to: url)
    }

    private static func encoded(_ settings: IndicatorSettings) throws -> Data {
        try settings.validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(settings)
    }
}
