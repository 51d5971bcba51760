import Foundation
import HaulCore
import Testing

@Suite("HTTP resume")
struct HTTPResumeTests {
    let strong = #""abc123""#
    let weak = #"W/"abc123""#
    let date = "Wed, 21 Oct 2015 07:28:00 GMT"

    /// Headers as comparable strings.
    private func lines(_ headers: [(String, String)]) -> [String] {
        headers.map { "\($0.0): \($0.1)" }
    }

    // MARK: - Validators and request headers

    @Test func validatorHeadersAreFoundInAnyCase() {
        let validator = ResumeValidator(headers: [("etag", " \(strong) "), ("LAST-MODIFIED", date), ("ETag", "other")])
        #expect(validator == ResumeValidator(etag: strong, lastModified: date))
        #expect(ResumeValidator(headers: [("Content-Length", "1"), ("ETag", "")]) == ResumeValidator())
    }

    @Test func aDateIsStrongOnlyASecondOrMoreBeforeTheResponsesDate() {
        func strength(_ headers: [(String, String)]) -> Bool {
            ResumeValidator(headers: [("Last-Modified", date)] + headers).lastModifiedIsStrong
        }
        #expect(strength([("Date", "Wed, 21 Oct 2015 07:28:01 GMT")]))
        #expect(strength([("date", "Thu, 22 Oct 2015 07:28:00 GMT")]))
        #expect(strength([("Date", "Wednesday, 21-Oct-15 07:28:01 GMT")]), "RFC 850 form")
        #expect(strength([("Date", "Wed Oct 21 07:28:01 2015")]), "asctime form")
        #expect(!strength([("Date", date)]), "modified within the second the response was sent")
        #expect(!strength([("Date", "Wed, 21 Oct 2015 07:27:59 GMT")]), "modified after the response's Date")
        #expect(!strength([]), "no Date: nothing says when the response was made")
        #expect(!strength([("Date", "yesterday")]))
        #expect(!ResumeValidator(headers: [("Last-Modified", "soon"), ("Date", date)]).lastModifiedIsStrong)
    }

    @Test func ifRangePrefersAStrongEntityTag() {
        #expect(ResumeValidator(etag: strong, lastModified: date, lastModifiedIsStrong: true).ifRangeValue == strong)
        #expect(ResumeValidator(etag: strong, lastModified: date).ifRangeValue == strong)
        #expect(ResumeValidator(etag: strong).ifRangeValue == strong)
    }

    @Test func ifRangeNeverCarriesAWeakOrMalformedEntityTag() {
        #expect(ResumeValidator(etag: weak, lastModified: date, lastModifiedIsStrong: true).ifRangeValue == date)
        #expect(ResumeValidator(etag: weak).ifRangeValue == nil)
        #expect(ResumeValidator(etag: "abc123").ifRangeValue == nil)
        #expect(ResumeValidator(etag: "\"").ifRangeValue == nil)
        #expect(ResumeValidator(lastModified: date, lastModifiedIsStrong: true).ifRangeValue == date)
        #expect(ResumeValidator().ifRangeValue == nil)
    }

    @Test func ifRangeNeverCarriesAWeakDate() {
        #expect(ResumeValidator(lastModified: date).ifRangeValue == nil)
        #expect(ResumeValidator(etag: weak, lastModified: date).ifRangeValue == nil)
        let sameSecond = ResumeValidator(headers: [("Last-Modified", date), ("Date", date)])
        #expect(HTTPResume.rangeRequestHeaders(offset: 5, validator: sameSecond).map(\.0) == ["Range"])
    }

    @Test func aSavedValidatorWithoutItsStrengthHasAWeakDate() throws {
        // As versions before the date's strength wrote it.
        let old = #"{"etag": "W/\"abc123\"", "lastModified": "Wed, 21 Oct 2015 07:28:00 GMT"}"#
        let decoded = try JSONDecoder().decode(ResumeValidator.self, from: Data(old.utf8))
        #expect(decoded == ResumeValidator(etag: weak, lastModified: date))
        #expect(decoded.ifRangeValue == nil)
        let strongDate = ResumeValidator(lastModified: date, lastModifiedIsStrong: true)
        let again = try JSONDecoder().decode(ResumeValidator.self, from: JSONEncoder().encode(strongDate))
        #expect(again == strongDate)
    }

    @Test func rangeRequestHeaders() {
        #expect(HTTPResume.rangeRequestHeaders(offset: 0, validator: ResumeValidator(etag: strong)).isEmpty)
        #expect(HTTPResume.rangeRequestHeaders(offset: -4, validator: nil).isEmpty)
        #expect(
            lines(HTTPResume.rangeRequestHeaders(offset: 1024, validator: ResumeValidator(etag: strong)))
                == ["Range: bytes=1024-", "If-Range: \(strong)"]
        )
        #expect(
            lines(
                HTTPResume.rangeRequestHeaders(
                    offset: 5, validator: ResumeValidator(etag: weak, lastModified: date, lastModifiedIsStrong: true)
                )
            ) == ["Range: bytes=5-", "If-Range: \(date)"]
        )
        #expect(lines(HTTPResume.rangeRequestHeaders(offset: 5, validator: nil)) == ["Range: bytes=5-"])
        #expect(
            lines(HTTPResume.rangeRequestHeaders(offset: 5, validator: ResumeValidator(etag: weak))) == [
                "Range: bytes=5-"
            ]
        )
    }

    @Test func resumableNeedsRangesAndAValidator() {
        #expect(HTTPResume.isResumable(status: 200, headers: [("Accept-Ranges", "bytes"), ("ETag", strong)]))
        let later = ("Date", "Thu, 22 Oct 2015 07:28:00 GMT")
        #expect(
            HTTPResume.isResumable(status: 200, headers: [("accept-ranges", " Bytes "), ("Last-Modified", date), later])
        )
        #expect(HTTPResume.isResumable(status: 206, headers: [("Last-Modified", date), later]), "206: ranges work")
        #expect(!HTTPResume.isResumable(status: 206, headers: [("Last-Modified", date), ("Date", date)]), "a weak date")
        #expect(!HTTPResume.isResumable(status: 200, headers: [("Accept-Ranges", "bytes"), ("Last-Modified", date)]))
        #expect(!HTTPResume.isResumable(status: 200, headers: [("Accept-Ranges", "none"), ("ETag", strong)]))
        #expect(!HTTPResume.isResumable(status: 200, headers: [("ETag", strong)]))
        #expect(!HTTPResume.isResumable(status: 200, headers: [("Accept-Ranges", "bytes")]))
        #expect(!HTTPResume.isResumable(status: 200, headers: [("Accept-Ranges", "bytes"), ("ETag", weak)]))
    }

    // MARK: - Responses

    @Test func okWritesFromTheStart() {
        let full = HTTPResume.interpret(status: 200, headers: [("Content-Length", "1000")], requestedOffset: 0)
        #expect(full == .writeFromStart(expectedTotal: 1000))
        #expect(
            HTTPResume.interpret(status: 200, headers: [], requestedOffset: 0) == .writeFromStart(expectedTotal: nil)
        )
        let bogus = HTTPResume.interpret(status: 200, headers: [("content-length", "-1")], requestedOffset: 0)
        #expect(bogus == .writeFromStart(expectedTotal: nil))
    }

    @Test func okToARangeRequestRestartsTheFile() {
        let decision = HTTPResume.interpret(status: 200, headers: [("Content-Length", "900")], requestedOffset: 500)
        #expect(decision == .writeFromStart(expectedTotal: 900), "the server ignored Range, or If-Range failed")
        #expect(decision.discardsPartialFile)
    }

    @Test func partialContentFromTheRightOffsetIsAppended() {
        let decision = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 500-999/1000"), ("Content-Length", "500")],
            requestedOffset: 500
        )
        #expect(decision == .append(offset: 500, expectedTotal: 1000))
        #expect(!decision.discardsPartialFile)
    }

    @Test func partialContentWithAnUnknownTotal() {
        let decision = HTTPResume.interpret(
            status: 206,
            headers: [("content-range", "bytes 500-999/*")],
            requestedOffset: 500
        )
        #expect(decision == .append(offset: 500, expectedTotal: nil))
    }

    @Test func partialContentFromTheWrongOffsetFailsAndDiscards() {
        let decision = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 400-999/1000")],
            requestedOffset: 500
        )
        guard case .fail(let failure) = decision else {
            Issue.record("expected a failure, got \(decision)")
            return
        }
        #expect(failure.isTransient)
        #expect(failure.kind == .network)
        #expect(failure.httpStatus == 206)
        #expect(decision.discardsPartialFile)
    }

    @Test func partialContentFromZeroIsTheWholeResource() {
        let unasked = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 0-99/100")],
            requestedOffset: 0
        )
        #expect(unasked == .writeFromStart(expectedTotal: 100))
        let asked = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 0-99/100")],
            requestedOffset: 50
        )
        #expect(asked == .writeFromStart(expectedTotal: 100))
        let unknown = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 0-99/*")],
            requestedOffset: 0
        )
        #expect(unknown == .writeFromStart(expectedTotal: nil))
    }

    @Test func unaskedPartialContentNotFromZeroFails() {
        let decision = HTTPResume.interpret(
            status: 206,
            headers: [("Content-Range", "bytes 10-99/100")],
            requestedOffset: 0
        )
        #expect(decision.discardsPartialFile)
        guard case .fail(let failure) = decision else {
            Issue.record("expected a failure, got \(decision)")
            return
        }
        #expect(failure.isTransient)
    }

    @Test(arguments: [
        nil, "", "bytes 5-3/10", "bytes 0-10/10", "items 0-1/2", "bytes */10", "bytes 500-/1000", "bytes 500-999",
        "bytes -5-999/1000", "bytes 500-999/-1", "bytes 500-999/1000/1", "bytes=500-999/1000",
    ])
    func malformedContentRangeFails(_ contentRange: String?) {
        let headers = contentRange.map { [("Content-Range", $0)] } ?? []
        let decision = HTTPResume.interpret(status: 206, headers: headers, requestedOffset: 500)
        guard case .fail(let failure) = decision else {
            Issue.record("expected a failure for \(String(describing: contentRange)), got \(decision)")
            return
        }
        #expect(failure.isTransient)
        #expect(decision.discardsPartialFile)
    }

    @Test func rangeNotSatisfiableAtTheEndMeansComplete() {
        let decision = HTTPResume.interpret(
            status: 416,
            headers: [("Content-Range", "bytes */1000")],
            requestedOffset: 1000
        )
        #expect(decision == .alreadyComplete)
        #expect(!decision.discardsPartialFile)
    }

    @Test(arguments: [
        [("Content-Range", "bytes */900")], [("Content-Range", "bytes */2000")], [], [("Content-Range", "garbage")],
    ])
    func rangeNotSatisfiableOtherwiseRestartsFromZero(_ headers: [(String, String)]) {
        let decision = HTTPResume.interpret(status: 416, headers: headers, requestedOffset: 1000)
        guard case .fail(let failure) = decision else {
            Issue.record("expected a failure, got \(decision)")
            return
        }
        #expect(failure.kind == .http)
        #expect(failure.httpStatus == 416)
        #expect(failure.isTransient, "retried, from zero")
        #expect(decision.discardsPartialFile)
    }

    @Test func rangeNotSatisfiableWithoutARangeRequestIsPermanent() {
        let decision = HTTPResume.interpret(status: 416, headers: [("Content-Range", "bytes */0")], requestedOffset: 0)
        #expect(decision == .fail(.http(status: 416)))
        #expect(!decision.discardsPartialFile)
    }

    @Test func notFoundIsPermanent() {
        let decision = HTTPResume.interpret(status: 404, headers: [], requestedOffset: 0)
        #expect(decision == .fail(.http(status: 404)))
        #expect(!decision.discardsPartialFile)
    }

    @Test func serverErrorsAreTransient() {
        #expect(HTTPResume.interpret(status: 500, headers: [], requestedOffset: 10) == .fail(.http(status: 500)))
    }

    @Test func retryAfterIsCarried() {
        let now = Date(timeIntervalSince1970: 784_111_777)
        let seconds = HTTPResume.interpret(status: 503, headers: [("Retry-After", "120")], requestedOffset: 0, now: now)
        #expect(seconds == .fail(.http(status: 503, retryAfter: .seconds(120))))
        let date = HTTPResume.interpret(
            status: 429,
            headers: [("retry-after", "Sun, 06 Nov 1994 08:50:37 GMT")],
            requestedOffset: 0,
            now: now
        )
        #expect(date == .fail(.http(status: 429, retryAfter: .seconds(60))))
        let garbage = HTTPResume.interpret(
            status: 503,
            headers: [("Retry-After", "later")],
            requestedOffset: 0,
            now: now
        )
        #expect(garbage == .fail(.http(status: 503)))
    }

    @Test(arguments: [301, 302, 303, 304, 307, 308])
    func redirectsReachingHereAreErrors(_ status: Int) {
        let decision = HTTPResume.interpret(status: status, headers: [("Location", "/elsewhere")], requestedOffset: 0)
        #expect(decision == .fail(.http(status: status)))
        guard case .fail(let failure) = decision else { return }
        #expect(!failure.isTransient)
    }

    @Test func otherSuccessStatusesAreTheBody() {
        #expect(
            HTTPResume.interpret(status: 203, headers: [], requestedOffset: 0) == .writeFromStart(expectedTotal: nil)
        )
        let empty = HTTPResume.interpret(status: 204, headers: [("Content-Length", "0")], requestedOffset: 0)
        #expect(empty == .writeFromStart(expectedTotal: 0))
    }

    @Test func anAbsurdlyLongValidatorIsNotKept() {
        let long = "\"" + String(repeating: "e", count: 5000) + "\""
        let validator = ResumeValidator(headers: [("ETag", long), ("Last-Modified", "Mon, 01 Jan 2001 00:00:00 GMT")])
        #expect(validator.etag == nil)
        #expect(validator.lastModified == "Mon, 01 Jan 2001 00:00:00 GMT")
    }
}
