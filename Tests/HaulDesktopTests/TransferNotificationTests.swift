import DBusKit
import HaulContract
import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct TransferNotificationTests {
    static let task = HaulBus.taskPath(1)
    static let everything = NotificationCapabilities(bodyMarkup: true, actions: true)

    static func notification(before: TaskSnapshot = Tasks.download(), after: TaskSnapshot) -> TransferNotification? {
        TransferNotification(task: task, before: before, after: after)
    }

    @Test func aCompletedDownloadIsAnnouncedWithOpenAndShowInFolder() throws {
        let note = try #require(Self.notification(after: Tasks.download(.completed)))
        #expect(note.summary == "Download complete")
        #expect(note.body == "debian.iso")
        #expect(note.category == "transfer.complete")
        #expect(note.file == "/home/u/Downloads/debian.iso")
        #expect(note.actions == [.open, .showInFolder])
        let arguments = note.arguments(Self.everything, icon: "haul")
        let notify = DBusMessage.methodCall(
            destination: nil, path: "/", interface: nil, member: "Notify", body: arguments
        )
        #expect(notify.signature == "susssasa{sv}i")
        #expect(arguments[2] == .string("haul"), "Haul's icon")
        #expect(
            arguments[5] == .strings(["default", "Open", "open", "Open", "show-in-folder", "Show in folder"]),
            "a click opens the file too")
    }

    @Test func aFailureSaysWhyEscapedOnlyForServersReadingMarkupAndOffersRetry() throws {
        let failed = Tasks.download(.completed, error: .http, message: "HTTP 404 <Not Found>", file: "/d/a&b.iso")
        let note = try #require(Self.notification(before: Tasks.download(.suspended), after: failed))
        #expect(note.summary == "Download failed")
        #expect(note.body == "a&b.iso: HTTP 404 <Not Found>")
        #expect(note.arguments(Self.everything, icon: "haul")[4] == .string("a&amp;b.iso: HTTP 404 &lt;Not Found&gt;"))
        let plain = NotificationCapabilities(bodyMarkup: false, actions: true)
        #expect(note.arguments(plain, icon: "haul")[4] == .string("a&b.iso: HTTP 404 <Not Found>"))
        #expect(note.category == "transfer.error")
        #expect(note.actions == [.retry])
        #expect(note.arguments(plain, icon: "haul")[5] == .strings(["retry", "Retry"]), "no default action")
    }

    /// A server without the `actions` capability gets no buttons: one may turn a notification with actions into a
    /// dialog that waits.
    @Test func aServerWithoutActionsGetsNoButtons() throws {
        let note = try #require(Self.notification(after: Tasks.download(.completed)))
        #expect(note.arguments(.none, icon: "haul")[5] == .strings([]))
        #expect(note.arguments(NotificationCapabilities(["body", "body-markup"]), icon: "haul")[5] == .strings([]))
        #expect(NotificationCapabilities(["actions", "body"]) == .init(bodyMarkup: false, actions: true))
    }

    @Test func cancelsAndTasksSeenOnlyCompletedAreNotAnnounced() {
        let cancelled = Tasks.download(.completed, error: .cancelled, message: "cancelled")
        #expect(Self.notification(after: cancelled) == nil)
        #expect(Self.notification(before: Tasks.download(.completed), after: Tasks.download(.completed)) == nil)
        #expect(Self.notification(after: Tasks.download(bytes: 9)) == nil)
    }

    @Test func theKeysOfTheButtonsAreTheSpecsAndDefaultOpens() {
        #expect(NotificationAction(key: "default") == .open)
        #expect(NotificationAction(key: "show-in-folder") == .showInFolder)
        #expect(NotificationAction(key: "retry") == .retry)
        #expect(NotificationAction(key: "Retry") == nil)
        #expect(NotificationAction(key: "") == nil)
    }
}
