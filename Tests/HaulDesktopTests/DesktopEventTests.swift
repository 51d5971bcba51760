import DBusKit
import HaulContract
import HaulDesktop
import Testing

/// What the bridge makes of the messages it subscribes to.
@Suite(.timeLimit(.minutes(2))) struct DesktopEventTests {
    static let task = HaulBus.taskPath(1)

    static func signal(_ interface: String, _ member: String, path: ObjectPath, _ body: [DBusValue]) -> DBusMessage {
        var message = DBusMessage(kind: .signal, body: body)
        message.path = path
        message.interface = interface
        message.member = member
        return message
    }

    @Test func aTaskObjectAppearsWithItsProperties() {
        let properties = Tasks.properties(bytes: 5)
        let added = Self.signal(
            StandardInterfaces.objectManager.name, "InterfacesAdded", path: HaulBus.rootPath,
            [
                .objectPath(Self.task),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [DBusDictEntry(.string(HaulBus.taskInterface), .vardict(properties))]
                ),
            ]
        )
        #expect(DesktopEvent(added) == .taskAdded(Self.task, properties.mapValues(DBusValue.variant)))
        let manager = Self.signal(
            StandardInterfaces.objectManager.name, "InterfacesAdded", path: HaulBus.rootPath,
            [
                .objectPath(HaulBus.managerPath),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [DBusDictEntry(.string(HaulBus.managerInterface), .vardict([:]))]
                ),
            ]
        )
        #expect(DesktopEvent(manager) == nil, "not a task")
    }

    @Test func aTaskObjectGoesAway() {
        let removed = Self.signal(
            StandardInterfaces.objectManager.name, "InterfacesRemoved", path: HaulBus.rootPath,
            [.objectPath(Self.task), .strings([HaulBus.taskInterface])]
        )
        #expect(DesktopEvent(removed) == .taskRemoved(Self.task))
    }

    @Test func propertyChangesOfTasksAndOfTheIndicator() {
        let progress = TaskProperty.values([.bytesReceived: .uint64(9)])
        let task = Self.signal(
            StandardInterfaces.properties.name, "PropertiesChanged", path: Self.task,
            [.string(HaulBus.taskInterface), .vardict(progress), .strings([])]
        )
        #expect(DesktopEvent(task) == .taskChanged(Self.task, progress.mapValues(DBusValue.variant)))
        let visible = IndicatorProperty.values([.visible: .boolean(true)])
        let indicator = Self.signal(
            StandardInterfaces.properties.name, "PropertiesChanged", path: HaulBus.managerPath,
            [.string(HaulBus.indicatorInterface), .vardict(visible), .strings([])]
        )
        #expect(DesktopEvent(indicator) == .indicatorChanged(visible.mapValues(DBusValue.variant)))
        let limit = ManagerProperty.values([.downloadRateLimit: .uint64(1024)])
        let manager = Self.signal(
            StandardInterfaces.properties.name, "PropertiesChanged", path: HaulBus.managerPath,
            [.string(HaulBus.managerInterface), .vardict(limit), .strings([])]
        )
        #expect(DesktopEvent(manager) == .managerChanged(limit.mapValues(DBusValue.variant)))
    }

    @Test func ownersAndJobViewButtons() {
        let owner = Self.signal(
            "org.freedesktop.DBus", "NameOwnerChanged", path: "/org/freedesktop/DBus",
            [.string(KDEJobView.serverName), .string(""), .string(":1.7")]
        )
        #expect(DesktopEvent(owner) == .nameOwnerChanged(name: KDEJobView.serverName, owner: ":1.7"))
        let button = Self.signal(KDEJobView.viewInterface, "cancelRequested", path: "/jobs/1", [])
        #expect(DesktopEvent(button) == .jobViewRequest(view: "/jobs/1", signal: "cancelRequested"))
        #expect(DesktopEvent(Self.signal("org.example.Other", "Ping", path: "/", [])) == nil)
    }

    @Test func notificationButtonsAndClosing() {
        func signal(_ member: String, _ body: [DBusValue]) -> DBusMessage {
            Self.signal(TransferNotification.interface, member, path: TransferNotification.path, body)
        }
        let invoked = signal("ActionInvoked", [.uint32(7), .string("open")])
        #expect(DesktopEvent(invoked) == .notificationAction(id: 7, key: "open"))
        #expect(DesktopEvent(signal("NotificationClosed", [.uint32(7), .uint32(2)])) == .notificationClosed(id: 7))
        // Not the spec's arguments: nothing.
        #expect(DesktopEvent(signal("ActionInvoked", [.string("7"), .string("x")])) == nil)
        #expect(DesktopEvent(signal("NotificationClosed", [])) == nil)
        #expect(DesktopEvent(signal("ActivationToken", [.uint32(7), .string("token")])) == nil)
    }
}
