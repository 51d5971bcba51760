import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Firefox ESR hands a clicked download to hauld through the extension and its host, and keeps what Haul cannot or
/// should not take: end to end, with the real hauld on a private bus and a loopback site behind a login.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FirefoxHandOffTests {
    @Test func aClickedDownloadGoesToHauldWithTheLoginAndTheServersName() async throws {
        try await HandOffFixture.with(hauld: true) { fixture in
            try await Firefox.with(environment: fixture.environment) { firefox in
                try await firefox.open(fixture.loginURL, expecting: fixture.pageURL)
                try await firefox.click("file")
                let task = try await HandOffChecks.completedTask(fixture)
                // The browser's own download was cancelled, and left nothing in its folder.
                try await waitUntil(
                    "Firefox to cancel its download", timeout: .seconds(30), seen: { "\(firefox.downloadEnds())" }
                ) {
                    firefox.downloadEnds() == ["canceled"]
                }
                // Removing the partial file may follow the event.
                let left = { HandOffFixture.names(in: firefox.downloads) }
                try await waitUntil("nothing in the browser's folder", seen: { "\(left())" }) { left().isEmpty }
                try await HandOffChecks.hauldFetchedIt(task, fixture)
                try HandOffChecks.cookieStayedSecret(task, fixture, browserLog: firefox.log)
                // The host names the browser that started it.
                #expect(task.application == "firefox-esr")
            }
        }
    }

    @Test func withoutHauldTheBrowserDownloadsItItself() async throws {
        try await HandOffFixture.with(hauld: false) { fixture in
            try await Firefox.with(environment: fixture.environment) { firefox in
                try await firefox.open(fixture.loginURL, expecting: fixture.pageURL)
                try await firefox.click("file")
                try await waitUntil("Firefox's own download", timeout: .seconds(120)) {
                    firefox.downloadEnds() == ["complete"]
                }
                let file = firefox.downloads.appendingPathComponent(fixture.servedName)
                #expect(HandOffFixture.names(in: firefox.downloads) == [fixture.servedName])
                #expect(try Data(contentsOf: file) == fixture.content)
                try HandOffChecks.cookieStayedSecret(nil, fixture, browserLog: firefox.log)
            }
        }
    }

    @Test func aBlobDownloadStaysWithTheBrowser() async throws {
        try await HandOffFixture.with(hauld: true) { fixture in
            try await Firefox.with(environment: fixture.environment) { firefox in
                try await firefox.open(fixture.loginURL, expecting: fixture.pageURL)
                try await firefox.click("blob")
                try await waitUntil("Firefox's own download", timeout: .seconds(60)) {
                    firefox.downloadEnds() == ["complete"]
                }
                let file = firefox.downloads.appendingPathComponent("notes.txt")
                #expect(try String(contentsOf: file, encoding: .utf8) == BrowserTestSite.blobText)
                #expect(try await fixture.tasks().isEmpty)
                #expect(try await fixture.site.fileRequests().isEmpty)
            }
        }
    }
}
