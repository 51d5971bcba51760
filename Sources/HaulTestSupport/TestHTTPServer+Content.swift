package import Foundation

/// The test server's generated content without a server: `/gen/<size>?seed=<seed>` computed by the script offline,
/// to check a download against or to leave a partial file behind; and the SHA-256 of a file.
extension TestHTTPServer {
    /// SHA-256 (lower-case hex) of `/gen/<size>?seed=<seed>`, or of its bytes `range` (offsets, inclusive).
    ///
    /// The generator: for k = 0, 1, 2, …, SHAKE128 of the ASCII string `haul-gen:<seed>:<k>` (decimal numbers),
    /// 65 536 bytes of output each, concatenated and cut at `size`. Computed by the script, no server needed.
    package static func sha256OfGenerated(size: Int, seed: Int, range: ClosedRange<Int>? = nil) async throws -> String {
        var arguments = [scriptPath, "--sha256-gen", String(size), String(seed)]
        if let range { arguments += ["--range", "\(range.lowerBound)-\(range.upperBound)"] }
        let result = try await Command.run(try python(), arguments)
        guard result.status == 0 else { throw TestSupportError("--sha256-gen failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes the bytes of `/gen/<size>?seed=<seed>` (or only `range`, offsets inclusive) to `file`,
    /// e.g. to leave a partial download behind for a resume test.
    package static func writeGenerated(
        size: Int, seed: Int, range: ClosedRange<Int>? = nil, to file: URL
    ) async throws {
        var arguments = [scriptPath, "--gen", String(size), String(seed), "--output", file.path]
        if let range { arguments += ["--range", "\(range.lowerBound)-\(range.upperBound)"] }
        let result = try await Command.run(try python(), arguments)
        guard result.status == 0 else { throw TestSupportError("--gen failed: \(result.stderr)") }
    }

    /// SHA-256 (lower-case hex) of a file's contents, by `sha256sum`.
    package static func sha256(ofFile file: URL) async throws -> String {
        let result = try await Command.run("sha256sum", ["-b", file.path])
        guard result.status == 0, let hex = result.stdout.split(separator: " ").first, hex.count == 64 else {
            throw TestSupportError("sha256sum \(file.path) failed: \(result.stderr)")
        }
        return String(hex)
    }
}
