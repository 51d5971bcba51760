import DBusKit
import HaulContract
import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct TransferNotificationTests {
    @Test func aCompletedDownloadIsAnnounced() throws {
        let note = try #require(TransferNotification(before: Tasks.download(), after: Tasks.download(.completed)))
        #expect(note.summary == "Download complete")
        #expect(note.body == "debian.iso")
        #expect(note.category == "transfer.complete")
        let notify = DBusMessage.methodCall(
            destination: nil, path: "/", interface: nil, member: "Notify", body: note.arguments(bodyMarkup: true)
        )
        #expect(notify.signature == "susssasa{sv}i")
    }

    @Test func aFailureSaysWhyEscapedOnlyForServersReadingMarkup() throws {
        let failed = Tasks.download(.completed, error: .http, message: "HTTP 404 <Not Found>", file: "/d/a&b.iso")
        let note = try #require(TransferNotification(before: Tasks.download(.suspended), after: failed))
        #expect(note.summary == "Download failed")
        #expect(note.body == "a&b.iso: HTTP 404 <Not Found>")
        #expect(note.arguments(bodyMarkup: true)[4] == .string("a&amp;b.iso: HTTP 404 &lt;Not Found&gt;"))
        #expect(note.arguments(bodyMarkup: false)[4] == .string("a&b.iso: HTTP 404 <Not Found>"))
        #expect(note.category == "transfer.error")
    }

    @Test func cancelsAndTasksSeenOnlyCompletedAreNotAnnounced() {
        let cancelled = Tasks.download(.completed, error: .cancelled, message: "cancelled")
        #expect(TransferNotification(before: Tasks.download(), after: cancelled) == nil)
        #expect(TransferNotification(before: Tasks.download(.completed), after: Tasks.download(.completed)) == nil)
        #expect(TransferNotification(before: Tasks.download(), after: Tasks.download(bytes: 9)) == nil)
    }
}
