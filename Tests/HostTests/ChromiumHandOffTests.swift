import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Chromium hands a clicked download to hauld through the extension and its host, and keeps what Haul cannot or
/// should not take: end to end, with the real hauld on a private bus and a loopback site behind a login.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ChromiumHandOffTests {
    @Test func aClickedDownloadGoesToHauldWithTheLoginAndTheServersName() async throws {
        try await HandOffFixture.with(hauld: true) { fixture in
            try await Chromium.with(environment: fixture.environment) { chromium in
                let page = try await chromium.open(fixture.loginURL, expecting: fixture.pageURL)
                try await chromium.click("file", in: page)
                let task = try await HandOffChecks.completedTask(fixture)
                // The browser's own download was cancelled, and left nothing in its folder.
                try await waitUntil(
                    "Chromium to cancel its download", timeout: .seconds(30), seen: { "\(chromium.downloadStates())" }
                ) {
                    chromium.downloadStates() == ["canceled"]
                }
                // Removing the partial file may follow the event.
                let left = { HandOffFixture.names(in: chromium.downloads) }
                try await waitUntil("nothing in the browser's folder", seen: { "\(left())" }) { left().isEmpty }
                try await HandOffChecks.hauldFetchedIt(task, fixture)
                try HandOffChecks.cookieStayedSecret(task, fixture, browserLog: chromium.log)
                // The host names the browser that started it.
                #expect(task.application == "chromium")
                let worker = try await chromium.serviceWorkerSession()
                #expect(try await chromium.evaluate("chrome.action.getBadgeText({})", in: worker).string == "1")
            }
        }
    }

    @Test func withoutHauldTheBrowserDownloadsItItself() async throws {
        try await HandOffFixture.with(hauld: false) { fixture in
            try await Chromium.with(environment: fixture.environment) { chromium in
                let page = try await chromium.open(fixture.loginURL, expecting: fixture.pageURL)
                try await chromium.click("file", in: page)
                try await waitUntil("Chromium's own download", timeout: .seconds(120)) {
                    chromium.downloadStates() == ["completed"]
                }
                let file = chromium.downloads.appendingPathComponent(fixture.servedName)
                #expect(HandOffFixture.names(in: chromium.downloads) == [fixture.servedName])
                #expect(try Data(contentsOf: file) == fixture.content)
                try HandOffChecks.cookieStayedSecret(nil, fixture, browserLog: chromium.log)
            }
        }
    }

    @Test func aBlobDownloadStaysWithTheBrowser() async throws {
        try await HandOffFixture.with(hauld: true) { fixture in
            try await Chromium.with(environment: fixture.environment) { chromium in
                let page = try await chromium.open(fixture.loginURL, expecting: fixture.pageURL)
                try await chromium.click("blob", in: page)
                try await waitUntil("Chromium's own download", timeout: .seconds(60)) {
                    chromium.downloadStates() == ["completed"]
                }
                let file = chromium.downloads.appendingPathComponent("notes.txt")
                #expect(try String(contentsOf: file, encoding: .utf8) == BrowserTestSite.blobText)
                #expect(try await fixture.tasks().isEmpty)
                #expect(try await fixture.site.fileRequests().isEmpty)
            }
        }
    }
}
