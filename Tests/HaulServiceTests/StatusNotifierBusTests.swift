import DBusKit
import Foundation
import HaulContract
import HaulDesktop
import HaulTestSupport
import Testing

/// hauld's tray icon as a StatusNotifierWatcher (a fake one the test exports) and a panel see it.
@Suite(.timeLimit(.minutes(2))) struct StatusNotifierBusTests {
    static let item: ObjectPath = "/StatusNotifierItem"
    static let interface = "org.kde.StatusNotifierItem"

    @Test func theTrayIconRegistersAndShowsTheIndicatorAndTheTransfers() async throws {
        try await DesktopFixture.with { desktop throws in
            let watcher = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
            try await desktop.withHauld { f throws in
                let registration = try await DesktopFixture.call("RegisterStatusNotifierItem", in: watcher.log)
                // As KDE's own items do: the service is the registering connection's unique name.
                let service = registration.sender
                #expect(registration.arguments == [.string(service)])
                // The helper the negative test relies on finds the item where it is.
                #expect(try await Self.hauldConnectionsServingAnItem(f) == [service])
                func property(_ name: String) async throws -> DBusValue {
                    try await f.client.property(
                        destination: service, path: Self.item, interface: Self.interface, name: name
                    )
                }
                #expect(try await property("Status") == .string("Passive"))
                #expect(try await property("Category") == .string("SystemServices"))
                #expect(try await property("ItemIsMenu") == .boolean(false))
                // The menu hosts show on a right click (DBusMenuBusTests reads it).
                #expect(try await property("Menu") == .objectPath(DBusMenu.path))
                // Haul's own icon, which hauld run from the build finds in the source tree: no pixmaps needed.
                #expect(try await property("IconName") == .string("haul"))
                let icons = ContractDocument.repository.appendingPathComponent("integrations/icons").path
                #expect(try await property("IconThemePath") == .string(icons))
                #expect(try await property("IconPixmap").arrayValue?.isEmpty == true)
                #expect(try await Self.toolTipText(property("ToolTip")) == "No transfers running")

                let statuses = try await f.client.messages(matching: [
                    MatchRule(
                        kind: .signal, sender: service, path: Self.item, interface: Self.interface, member: "NewStatus"
                    )
                ])
                let signals = CallLog()
                let collector = Task { for await message in statuses { await signals.record(signal: message) } }
                defer { collector.cancel() }
                try await f.daemon.setIndicator(.activationDelay, .double(0.1))
                let holder = try await DBusConnection.connect(address: desktop.bus.address)
                try await f.daemon.callIndicator(.incrementActivityCount, on: holder)
                _ = try await DesktopFixture.call("NewStatus", in: signals) { $0.arguments == [.string("Active")] }
                #expect(try await property("Status") == .string("Active"))
                #expect(try await property("IconName") == .string("haul-busy"))

                let task = try await f.download("/gen/8m?seed=41&throttle=400000", to: "tray.bin")
                try await waitUntil("the tooltip to show the transfer", timeout: .seconds(10)) {
                    let text = try await Self.toolTipText(property("ToolTip"))
                    return text.hasPrefix("1 transfer: tray.bin ") && text.hasSuffix("%")
                }
                await holder.close()
                try await f.taskCall(task, .cancel)
                _ = try await DesktopFixture.call("NewStatus", in: signals) { $0.arguments == [.string("Passive")] }
                #expect(try await property("Status") == .string("Passive"))
                #expect(try await property("IconName") == .string("haul"))
            }
            await watcher.close()
        }
    }

    @Test func aWatcherThatComesLaterOrComesBackGetsTheItem() async throws {
        try await DesktopFixture.with { desktop throws in
            try await desktop.withHauld { _ throws in
                let first = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
                let service = try await DesktopFixture.call("RegisterStatusNotifierItem", in: first.log).sender
                await first.close()
                let second = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
                let again = try await DesktopFixture.call("RegisterStatusNotifierItem", in: second.log)
                #expect(again.sender == service)
                await second.close()
            }
        }
    }

    /// No watcher, so no panel shows the icon: its tooltip does not follow the transfers (which would wake hauld every
    /// second for nothing). A watcher that comes during one reads the tooltip as it is then.
    @Test func aWatcherThatComesDuringATransferReadsItsToolTipAsItIsThen() async throws {
        try await DesktopFixture.with { desktop throws in
            try await desktop.withHauld { f throws in
                let service = try #require(try await Self.hauldConnectionsServingAnItem(f).first)
                func toolTip() async throws -> String {
                    Self.toolTipText(
                        try await f.client.property(
                            destination: service, path: Self.item, interface: Self.interface, name: "ToolTip"
                        ))
                }
                let menuUpdates = try await f.client.messages(matching: [
                    MatchRule(
                        kind: .signal, sender: service, path: DBusMenu.path, interface: DBusMenu.interface,
                        member: "ItemsPropertiesUpdated"
                    )
                ])
                let updates = CallLog()
                let collecting = Task { for await message in menuUpdates { await updates.record(signal: message) } }
                defer { collecting.cancel() }
                let task = try await f.download("/gen/8m?seed=44&throttle=400000", to: "late.bin")
                try await f.wait(task, received: 500_000)
                // The bridge has handled the task: the menu's update goes out after what the tooltip would have.
                _ = try await DesktopFixture.call("ItemsPropertiesUpdated", in: updates)
                #expect(try await toolTip() == "No transfers running")

                let watcher = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
                _ = try await DesktopFixture.call("RegisterStatusNotifierItem", in: watcher.log)
                let text = try await toolTip()
                #expect(text.hasPrefix("1 transfer: late.bin ") && text.hasSuffix("%"), "\(text)")
                #expect(text != "1 transfer: late.bin 0%", "progress the bridge heard of before the watcher came")
                try await f.taskCall(task, .cancel)
                await watcher.close()
            }
        }
    }

    @Test func noStatusNotifierMeansNoTrayIcon() async throws {
        try await DesktopFixture.with { desktop throws in
            let watcher = try await FakeStatusNotifierWatcher.start(on: desktop.bus)
            let kde = try await FakeJobViewServer.start(on: desktop.bus)
            try await desktop.withHauld(["--no-status-notifier"]) { f throws in
                let task = try await f.download("/gen/100k?seed=42", to: "quiet.bin")
                try await f.wait(task, until: .completed)
                // The bridge exports its tray icon before it handles any task: once a view was asked for, the
                // icon would be there.
                _ = try await DesktopFixture.call("requestView", in: kde.log)
                #expect(try await Self.hauldConnectionsServingAnItem(f).isEmpty)
                #expect(await watcher.log.calls.isEmpty)
            }
            await kde.close()
            await watcher.close()
        }
    }

    /// The unique names of hauld's connections that export a StatusNotifierItem.
    static func hauldConnectionsServingAnItem(_ f: TransferFixture) async throws -> [String] {
        let bus = "org.freedesktop.DBus"
        let names = try await f.client.call(
            destination: bus, path: "/org/freedesktop/DBus", interface: bus, member: "ListNames"
        ).first?.arrayValue?.compactMap(\.stringValue) ?? []
        var serving: [String] = []
        for name in names where name.hasPrefix(":") {
            let pid = try? await f.client.call(
                destination: bus, path: "/org/freedesktop/DBus", interface: bus, member: "GetConnectionUnixProcessID",
                [.string(name)]
            ).first?.uint32Value
            guard pid == UInt32(bitPattern: f.daemon.hauld.pid) else { continue }
            // hauld's object server answers UnknownObject for a path it does not serve.
            let xml = (try? await f.client.call(
                destination: name, path: item, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"
            ))?.first?.stringValue ?? ""
            if xml.contains(interface) { serving.append(name) }
        }
        return serving
    }

    /// The `ToolTip` struct's text, `(sa(iiay)ss)`.
    static func toolTipText(_ value: DBusValue) -> String {
        guard case .structure(let fields) = value, fields.count == 4 else { return "" }
        return fields[3].stringValue ?? ""
    }
}
