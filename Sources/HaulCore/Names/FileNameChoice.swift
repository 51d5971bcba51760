package import FoundationEssentials

/// How hauld names a download whose destination is a folder, as a browser does: from the first response's
/// `Content-Disposition`, else the name the client suggested (`filename-hint`), else the last non-empty segment of
/// the final URL's path, else `download`. Each candidate is made safe (``SafeFileName``); one that leaves nothing
/// gives way to the next.
package enum FileNameChoice {
    package static func name(contentDisposition: String?, hint: String?, finalURL: URL) -> String {
        let candidates = [contentDisposition.flatMap(ContentDisposition.fileName), hint, lastSegment(of: finalURL)]
        for case let candidate? in candidates {
            if let name = SafeFileName.make(candidate) { return name }
        }
        return SafeFileName.fallback
    }

    /// The last non-empty segment of the URL's path, percent-decoded (left encoded when it is not UTF-8).
    static func lastSegment(of url: URL) -> String? {
        guard let segment = url.path(percentEncoded: true).split(separator: "/").last else { return nil }
        return ContentDisposition.percentDecoded(segment).flatMap { String(validating: $0, as: UTF8.self) }
            ?? String(segment)
    }

    /// The first of `name`, `name (1)`, `name (2)`, … (the number before the extension, `.tar.gz` kept whole) that
    /// `isTaken` refuses, each at most ``SafeFileName/maximumBytes``; nil when `limit` numbers are all taken.
    package static func available(_ name: String, limit: Int = 9999, isTaken: (String) -> Bool) -> String? {
        guard isTaken(name) else { return name }
        let parts = FileNameParts(name)
        for number in 1...max(limit, 1) {
            let candidate = SafeFileName.fitted(parts, suffix: " (\(number))")
            if !isTaken(candidate) { return candidate }
        }
        return nil
    }
}
