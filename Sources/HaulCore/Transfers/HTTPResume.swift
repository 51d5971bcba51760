package import FoundationEssentials

/// What identifies the version of a resource whose first bytes are on disk: the validator seen on the first response,
/// sent back in `If-Range` so that the server answers a range request only if the resource has not changed.
package struct ResumeValidator: Sendable, Codable, Equatable {
    /// The `ETag` as sent, quotes and any `W/` included.
    package var etag: String?
    /// The `Last-Modified` date as sent.
    package var lastModified: String?
    /// Whether ``lastModified`` is a strong validator (RFC 9110 §8.8.2.2): at least one second before the `Date` of
    /// the response that carried it. A resource may change twice within the second it names, so a later or equal
    /// `Date` (or none) makes it weak, and a weak date may not go in `If-Range`.
    package var lastModifiedIsStrong: Bool

    /// Creates a validator.
    package init(etag: String? = nil, lastModified: String? = nil, lastModifiedIsStrong: Bool = false) {
        self.etag = etag
        self.lastModified = lastModified
        self.lastModifiedIsStrong = lastModifiedIsStrong
    }

    /// The validator of a response: its first `ETag` and `Last-Modified` headers (names in any case; empty values
    /// ignored), the date strong when the response's `Date` is at least a second later. `now` places an RFC 850
    /// two-digit year.
    package init(headers: [(String, String)], now: Date = Date()) {
        // A validator goes back in every If-Range: one longer than any real one is ignored (the file is then not
        // resumable) rather than grow the requests toward the HTTP stack's 64 KiB head limit.
        let usable = { (value: String?) in value.flatMap { $0.utf8.count <= Self.maximumLength ? $0 : nil } }
        let lastModified = usable(HTTPResume.headerValue("Last-Modified", in: headers))
        // The year to within a day (mean Gregorian years): enough to place an RFC 850 two-digit year.
        let currentYear = 1970 + Int((now.timeIntervalSince1970 / 31_556_952).rounded(.down))
        var isStrong = false
        if let lastModified, let modified = HTTPDate.parse(lastModified, currentYear: currentYear),
            let date = HTTPResume.headerValue("Date", in: headers).flatMap({
                HTTPDate.parse($0, currentYear: currentYear)
            })
        {
            isStrong = modified < date
        }
        self.init(
            etag: usable(HTTPResume.headerValue("ETag", in: headers)), lastModified: lastModified,
            lastModifiedIsStrong: isStrong
        )
    }

    /// The longest ETag or date kept (real ones are tens of bytes).
    static let maximumLength = 1024

    /// The value for `If-Range`, or nil when nothing may be sent.
    ///
    /// A strong entity tag is preferred. A weak one (`W/"…"`) is never sent, as RFC 9110 §13.1.5 forbids it; we then
    /// fall back to a strong `Last-Modified`, which the server compares for an exact match, so a changed resource
    /// still comes back whole with a 200 (the RFC is stricter and would send nothing; in practice servers with weak
    /// tags — nginx compressing on the fly — are exactly the ones whose dates are good enough). A malformed tag (no
    /// quotes) counts as weak. A weak date is never sent: a resource changed within its second would match it.
    package var ifRangeValue: String? {
        if let etag, etag.count >= 2, etag.hasPrefix("\""), etag.hasSuffix("\"") {
            return etag
        }
        return lastModifiedIsStrong ? lastModified : nil
    }

    private enum CodingKeys: String, CodingKey {
        case etag, lastModified, lastModifiedIsStrong
    }

    /// Decodes a saved validator. Records of versions before `lastModifiedIsStrong` lack it: their date counts as
    /// weak, because nothing tells whether it was at least a second before its response's `Date`. The cost is that
    /// such a task, if it has no strong entity tag, starts again from zero once; sending a weak date could splice two
    /// versions of the file.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        lastModifiedIsStrong = try container.decodeIfPresent(Bool.self, forKey: .lastModifiedIsStrong) ?? false
    }
}

/// The HTTP semantics of resuming a download from the bytes on disk (RFC 9110 §14), with no I/O.
package enum HTTPResume {
    /// What to do with a response to a download request.
    package enum ResponseDecision: Equatable, Sendable {
        /// The body is the resource from its first byte: truncate the partial file and write it from the start.
        /// `expectedTotal` is the size of the whole resource, if known.
        case writeFromStart(expectedTotal: Int64?)
        /// The body continues the partial file at `offset` (its current size): append it. `expectedTotal` is the size
        /// of the whole resource, if known, so the file is complete when it reaches that size.
        case append(offset: Int64, expectedTotal: Int64?)
        /// The partial file already holds the whole resource: no body to read; verify and finish.
        case alreadyComplete
        /// The response cannot be used; the task fails with this (retried if it is transient).
        case fail(TransferFailure)

        /// Whether the bytes on disk must be dropped, so that the next write — or the next attempt — starts from
        /// zero.
        ///
        /// True for ``writeFromStart(expectedTotal:)``, and for the transient failures that show the server cannot
        /// continue from this partial file: a 206 that does not start where asked or cannot be parsed, and a 416 that
        /// does not say the file is complete. Without that, the next attempt would send the same range and meet the
        /// same answer until the retries run out.
        package var discardsPartialFile: Bool {
            switch self {
            case .writeFromStart:
                return true
            case .append, .alreadyComplete:
                return false
            case .fail(let failure):
                return failure.isTransient && (failure.httpStatus == 206 || failure.httpStatus == 416)
            }
        }
    }

    /// The headers that ask for the rest of a resource whose first `offset` bytes are on disk: `Range: bytes=N-`, and
    /// `If-Range` when the validator allows one. Empty for an offset of zero (or less).
    ///
    /// Sending `Range` without `If-Range` risks gluing two versions of a resource together; the caller avoids it by
    /// passing offset zero for a task that is not resumable (see ``isResumable(status:headers:)``).
    package static func rangeRequestHeaders(offset: Int64, validator: ResumeValidator?) -> [(String, String)] {
        guard offset > 0 else { return [] }
        var headers = [("Range", "bytes=\(offset)-")]
        if let ifRange = validator?.ifRangeValue {
            headers.append(("If-Range", ifRange))
        }
        return headers
    }

    /// Decides what to do with a response of `status` and `headers` to a request for the resource from byte
    /// `requestedOffset` (zero: the whole resource, no `Range` sent).
    ///
    /// - 2xx other than 206: the whole resource (a server may ignore `Range`, or `If-Range` found it changed).
    /// - 206: `Content-Range: bytes a-b/total` (total may be `*`). Appended if `a` is the requested offset; written
    ///   from the start if `a` is 0. Any other start, or a missing or malformed `Content-Range`, fails with a
    ///   transient ``TransferErrorKind/network`` failure carrying status 206 whose
    ///   ``ResponseDecision/discardsPartialFile`` is true: the next attempt starts clean from zero.
    /// - 416 after a range request: `Content-Range: bytes */total` with total equal to the offset means the file is
    ///   already whole (``ResponseDecision/alreadyComplete``). Otherwise the partial file does not fit the resource
    ///   (it changed and shrank): a transient ``TransferErrorKind/http`` 416 failure that discards the partial file,
    ///   so the retry downloads it all again.
    /// - anything else, 3xx included (redirects are noted before this is asked, so one reaching here is an error):
    ///   ``TransferFailure/http(status:retryAfter:)`` with the `Retry-After` delay as of `now`.
    package static func interpret(
        status: Int,
        headers: [(String, String)],
        requestedOffset: Int64,
        now: Date = Date()
    ) -> ResponseDecision {
        switch status {
        case 206:
            return interpretPartialContent(headers: headers, requestedOffset: requestedOffset)
        case 200...299:
            return .writeFromStart(expectedTotal: contentLength(headers))
        case 416 where requestedOffset > 0:
            if let range = headerValue("Content-Range", in: headers).flatMap(parseUnsatisfiedRange),
                range == requestedOffset
            {
                return .alreadyComplete
            }
            return .fail(
                TransferFailure(
                    kind: .http,
                    message: "HTTP 416 Range Not Satisfiable: the \(requestedOffset) bytes on disk do not fit the "
                        + "resource; starting again from zero",
                    httpStatus: 416,
                    isTransient: true
                )
            )
        default:
            let retryAfter = headerValue("Retry-After", in: headers).flatMap {
                RetryPolicy.parseRetryAfter($0, now: now)
            }
            return .fail(.http(status: status, retryAfter: retryAfter))
        }
    }

    /// Whether a download from this server can continue from the bytes on disk after a stop: the server takes byte
    /// ranges (`Accept-Ranges: bytes`, or it just answered one with 206) and gave a validator usable in `If-Range`.
    package static func isResumable(status: Int, headers: [(String, String)]) -> Bool {
        let acceptsRanges =
            status == 206
            || headers.contains { name, value in
                let units = value.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
                return name.lowercased() == "accept-ranges" && units.contains("bytes")
            }
        return acceptsRanges && ResumeValidator(headers: headers).ifRangeValue != nil
    }

    // MARK: - Header parsing

    /// The first value of the header `name` (any case), trimmed; nil if absent or empty.
    package static func headerValue(_ name: String, in headers: [(String, String)]) -> String? {
        let lowered = name.lowercased()
        guard let value = headers.first(where: { $0.0.lowercased() == lowered })?.1 else { return nil }
        let trimmed = value.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }

    private static func interpretPartialContent(
        headers: [(String, String)],
        requestedOffset: Int64
    ) -> ResponseDecision {
        let offset = max(requestedOffset, 0)
        guard let header = headerValue("Content-Range", in: headers), let range = parseContentRange(header) else {
            return .fail(unusablePartialContent("a missing or malformed Content-Range"))
        }
        if range.first == offset && offset > 0 {
            return .append(offset: offset, expectedTotal: range.total)
        }
        if range.first == 0 {
            return .writeFromStart(expectedTotal: range.total)
        }
        return .fail(unusablePartialContent("bytes from \(range.first) when asked for bytes from \(offset)"))
    }

    private static func unusablePartialContent(_ what: String) -> TransferFailure {
        TransferFailure(
            kind: .network,
            message: "the server answered 206 with \(what); starting again from zero",
            httpStatus: 206,
            isTransient: true
        )
    }

    /// `Content-Length` as a size: digits only, so `-1` or `12, 12` are not sizes.
    private static func contentLength(_ headers: [(String, String)]) -> Int64? {
        headerValue("Content-Length", in: headers).flatMap(parseNonNegative)
    }

    /// `bytes a-b/total` or `bytes a-b/*`, with `a ≤ b < total`.
    package static func parseContentRange(_ value: String) -> (first: Int64, total: Int64?)? {
        guard let (range, total) = splitContentRange(value) else { return nil }
        let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = parseNonNegative(bounds[0]), let last = parseNonNegative(bounds[1]),
            first <= last
        else { return nil }
        if total == "*" {
            return (first, nil)
        }
        guard let size = parseNonNegative(total), last < size else { return nil }
        return (first, size)
    }

    /// The total of `bytes */total`, the form a 416 carries.
    private static func parseUnsatisfiedRange(_ value: String) -> Int64? {
        guard let (range, total) = splitContentRange(value), range == "*" else { return nil }
        return parseNonNegative(total)
    }

    /// Splits `bytes <range>/<total>` (unit in any case) into its range and total parts.
    private static func splitContentRange(_ value: String) -> (range: Substring, total: Substring)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let spec = parts[1].trimmingWhitespace()
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        return (halves[0], halves[1])
    }

    private static func parseNonNegative(_ digits: some StringProtocol) -> Int64? {
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(digits)
    }
}
