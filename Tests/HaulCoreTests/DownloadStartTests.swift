import Foundation
import HaulCore
import Testing

/// Where a download's next attempt starts, from its record and the size of its partial file.
@Suite(.timeLimit(.minutes(2))) struct DownloadStartTests {
    static let mib: Int64 = 1 << 20
    static let strong = ResumeValidator(etag: #""v1""#)
    /// A date as its own response's `Date`: it may not go in `If-Range`.
    static let weakDate = ResumeValidator(lastModified: "Wed, 21 Oct 2015 07:28:00 GMT", lastModifiedIsStrong: false)

    static func record(
        connections: UInt32 = 1, validator: ResumeValidator? = strong, total: Int64 = 8 * mib,
        segments: SegmentPlan? = nil, singleConnection: Bool = false
    ) -> TaskRecord {
        TaskRecord(
            id: 1, kind: .download, url: "http://127.0.0.1/f", path: "/tmp/f",
            createdAt: Date(timeIntervalSince1970: 0),
            validator: validator, expectedTotal: total, connections: connections, segments: segments,
            singleConnection: singleConnection
        )
    }

    @Test func oneConnectionContinuesFromThePartialFileUnderAValidator() {
        let start = DownloadStart(Self.record(), partialSize: 300)
        #expect(start == .single(offset: 300, validator: Self.strong))
        #expect(start.bytesDone == 300)
    }

    /// A download into a folder not named yet has no partial file: its first answer, on one connection, names it.
    @Test func aDownloadAwaitingItsNameStartsFromZeroOnOneConnection() {
        var record = Self.record(connections: 4)
        record.awaitsName = true
        #expect(DownloadStart(record, partialSize: 300) == .single(offset: 0, validator: nil))
        record.awaitsName = false
        #expect(DownloadStart(record, partialSize: 300) != .single(offset: 0, validator: nil))
    }

    /// Without a validator usable in `If-Range`, a 206 could splice two versions of the file.
    @Test(arguments: [nil, weakDate, ResumeValidator(etag: "unquoted")])
    func withoutAUsableValidatorOneConnectionStartsFromZero(_ validator: ResumeValidator?) {
        let start = DownloadStart(Self.record(validator: validator), partialSize: 300)
        #expect(start == .single(offset: 0, validator: validator))
        #expect(start.bytesDone == 0)
    }

    /// Connections raised after one connection appended some bytes: those are the first segment's start.
    @Test func severalConnectionsKeepWhatOneConnectionAppended() {
        let start = DownloadStart(Self.record(connections: 4), partialSize: 300)
        let appended = SegmentPlan(total: 8 * Self.mib, done: 300)
        #expect(start == .segmented(connections: 4, plan: appended, validator: Self.strong))
        #expect(start.bytesDone == 300)
    }

    @Test func severalConnectionsWithoutAValidatorOrASizeStartFromZero() {
        for record in [Self.record(connections: 4, validator: nil), Self.record(connections: 4, total: -1)] {
            #expect(DownloadStart(record, partialSize: 300) == .segmented(connections: 4, plan: nil, validator: nil))
        }
    }

    /// A saved plan says what the preallocated file holds; its size says nothing.
    @Test func aSavedPlanIsContinuedEvenWithOneConnection() {
        var plan = SegmentPlan(total: 8 * Self.mib)
        plan.spread(over: 2)
        let start = DownloadStart(Self.record(connections: 1, segments: plan), partialSize: UInt64(8 * Self.mib))
        #expect(start == .segmented(connections: 1, plan: plan, validator: Self.strong))
        #expect(start.bytesDone == 0)
    }

    @Test func aSavedPlanThatDoesNotFitTheFileStartsFromZero() {
        let plan = SegmentPlan(total: 4 * Self.mib, done: Self.mib)
        let start = DownloadStart(Self.record(connections: 4, segments: plan), partialSize: UInt64(4 * Self.mib))
        #expect(start == .segmented(connections: 4, plan: nil, validator: nil))
    }

    /// After the file changed under a segmented download: one connection, whatever the record asks.
    @Test func aDownloadHeldToOneConnectionNeverSegments() {
        let start = DownloadStart(Self.record(connections: 4, singleConnection: true), partialSize: 300)
        #expect(start == .single(offset: 300, validator: Self.strong))
    }

    /// A size no file has (from a damaged record or file system) is clamped, never trapped on.
    @Test func aHugePartialSizeIsClamped() {
        #expect(DownloadStart(Self.record(), partialSize: .max) == .single(offset: .max, validator: Self.strong))
    }
}
