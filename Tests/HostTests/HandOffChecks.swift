import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// What both browsers' hand-off tests check of hauld and the site.
enum HandOffChecks {
    /// hauld's one task, once it has completed.
    static func completedTask(_ fixture: HandOffFixture) async throws -> TaskSnapshot {
        var tasks: [TaskSnapshot] = []
        try await waitUntil(
            "hauld's task to complete", timeout: .seconds(120),
            seen: { tasks.map { "\($0.state?.rawValue ?? "?") \($0.path) \($0.errorMessage)" }.joined(separator: "; ") }
        ) {
            tasks = try await fixture.tasks()
            return tasks.count == 1 && tasks[0].isCompleted
        }
        return tasks[0]
    }

    /// hauld fetched the file with the login cookie, the page as referrer and the browser's user agent, named it as
    /// the server did, and wrote it byte for byte.
    static func hauldFetchedIt(_ task: TaskSnapshot, _ fixture: HandOffFixture) async throws {
        #expect(task.errorName == "", "\(task.errorMessage)")
        let path = fixture.hauldDownloads.appendingPathComponent(fixture.servedName).path
        #expect(task.path == path)
        #expect(FileManager.default.contents(atPath: path) == fixture.content)
        #expect(HandOffFixture.names(in: fixture.hauldDownloads) == [fixture.servedName])
        // The browser's own request, then hauld's: the site answers neither without the cookie and the referrer.
        let requests = try await fixture.site.fileRequests()
        #expect(requests.count == 2, "\(requests)")
        for request in requests {
            #expect(request.status == 200 && request.cookie && request.referer == fixture.pageURL, "\(request)")
        }
        #expect(Set(requests.map(\.userAgent)).count == 1, "\(requests.map(\.userAgent))")
    }

    /// The login cookie went to the site and nowhere else: not in what hauld publishes of the task, and not in what
    /// the browser, its extension and the hosts it started printed (`browserLog`). hauld's own log is checked by
    /// ``HandOffFixture/with(hauld:_:)`` once hauld has stopped.
    static func cookieStayedSecret(_ task: TaskSnapshot?, _ fixture: HandOffFixture, browserLog: URL) throws {
        // The snapshot keeps every string property of the task (the others are numbers and booleans).
        if let task { #expect(!"\(task)".contains(fixture.site.secret)) }
        let log = try String(decoding: Data(contentsOf: browserLog), as: UTF8.self)
        #expect(!log.contains(fixture.site.secret), "the browser's log holds the cookie")
    }
}
