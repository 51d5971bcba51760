import DBusKit
import Foundation
import HaulTestSupport

/// One method call a fake desktop service received.
struct RecordedCall: Sendable {
    let member: String
    let path: ObjectPath
    let sender: String
    let arguments: [DBusValue]

    /// The `a{sv}` argument at `index`, unwrapped.
    func vardict(_ index: Int) -> [String: DBusValue] {
        (arguments.indices.contains(index) ? arguments[index].stringDictionary : nil)?.mapValues(\.unwrapped) ?? [:]
    }
}

/// What a fake received, in order.
actor CallLog {
    private(set) var calls: [RecordedCall] = []

    func record(_ call: DBusMethodCall) {
        calls.append(RecordedCall(member: call.member, path: call.path, sender: call.sender, arguments: call.arguments))
    }

    /// A signal, recorded like a call.
    func record(signal message: DBusMessage) {
        calls.append(
            RecordedCall(
                member: message.member ?? "", path: message.path ?? "/", sender: message.sender ?? "",
                arguments: message.body
            )
        )
    }

    func calls(_ member: String) -> [RecordedCall] { calls.filter { $0.member == member } }
}

/// A desktop service the test plays on the private bus: its own connection owning a well-known name, exporting
/// objects with DBusKit's object server and recording every call. `close()` makes it leave the bus.
final class FakeService: Sendable {
    let connection: DBusConnection
    let objects: DBusObjectServer
    let log: CallLog
    private let serving: Task<Void, Never>

    private let name: String

    private init(connection: DBusConnection, objects: DBusObjectServer, log: CallLog, name: String) {
        self.connection = connection
        self.objects = objects
        self.log = log
        self.name = name
        serving = Task { await objects.run() }
    }

    /// Exports what `setUp` exports, then takes `name` (last, as real services do).
    static func start(
        on bus: PrivateBus, name: String, _ setUp: (DBusObjectServer, CallLog) async throws -> Void
    ) async throws -> FakeService {
        let connection = try await DBusConnection.connect(address: bus.address)
        let objects = try await DBusObjectServer(connection: connection)
        let log = CallLog()
        try await setUp(objects, log)
        let service = FakeService(connection: connection, objects: objects, log: log, name: name)
        guard try await connection.requestName(name) == .primaryOwner else {
            await service.close()
            throw TestSupportError("\(name) is already owned")
        }
        return service
    }

    /// Releases the name first: the bus answers once it is free, so a new fake can take it at once (a mere
    /// disconnect frees it only when the bus gets round to it).
    func close() async {
        _ = try? await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", [.string(name)]
        )
        serving.cancel()
        await connection.close()
    }

    /// A recording handler that answers with `reply`.
    static func recording(_ log: CallLog, reply: [DBusValue] = []) -> DBusExportedInterface.MethodHandler {
        { call in
            await log.record(call)
            return reply
        }
    }
}

/// Plasma's job view server, typed from plasma-workspace's `org.kde.JobViewServerV2.xml` and
/// `org.kde.JobViewV3.xml`: `requestView(s, i, a{sv}) → o` hands out `/org/kde/notificationmanager/jobs/JobView_N`
/// objects that record `update(a{sv})` and `terminate(u, s, a{sv})` and can send the panel's requests.
enum FakeJobViewServer {
    static let name = "org.kde.JobViewServer"

    static let server = DBusInterfaceDescription(
        name: "org.kde.JobViewServerV2",
        methods: [
            .init(
                "requestView",
                inputs: [
                    .init("desktopEntry", .string), .init("capabilities", .int32),
                    .init("hints", .dictionary(key: .string, value: .variant)),
                ],
                outputs: [.init("trackerPath", .objectPath)]
            )
        ]
    )

    static let view = DBusInterfaceDescription(
        name: "org.kde.JobViewV3",
        methods: [
            .init(
                "terminate",
                inputs: [
                    .init("errorCode", .uint32), .init("errorMessage", .string),
                    .init("hints", .dictionary(key: .string, value: .variant)),
                ]
            ),
            .init("update", inputs: [.init("properties", .dictionary(key: .string, value: .variant))]),
        ],
        signals: ["updateRequested", "suspendRequested", "resumeRequested", "cancelRequested"].map { .init($0) }
    )

    static func start(on bus: PrivateBus) async throws -> FakeService {
        try await FakeService.start(on: bus, name: name) { objects, log in
            let exported = DBusExportedInterface(
                server,
                methods: [
                    "requestView": { call in
                        await log.record(call)
                        let number = await log.calls("requestView").count
                        guard let path = ObjectPath("/org/kde/notificationmanager/jobs/JobView_\(number)") else {
                            throw DBusError.failed("bad view path")
                        }
                        try await objects.export(
                            [
                                DBusExportedInterface(
                                    view,
                                    methods: [
                                        "update": FakeService.recording(log), "terminate": FakeService.recording(log),
                                    ]
                                )
                            ],
                            at: path
                        )
                        return [.objectPath(path)]
                    }
                ]
            )
            try await objects.export([exported], at: "/JobViewServer")
        }
    }

    /// Sends `signal` (`suspendRequested`, …) from the view at `path`, as the panel does on a button press.
    static func press(_ signal: String, on path: ObjectPath, of service: FakeService) async throws {
        try await service.objects.emitSignal(path: path, interface: view.name, member: signal)
    }
}

extension FakeNotifications {
    /// What a server sends when the button `key` of notification `id` is clicked: `ActionInvoked`, then
    /// `NotificationClosed` with reason 2 (dismissed by the user), as a server closes a notification whose action ran.
    static func press(_ key: String, on id: UInt32, of service: FakeService) async throws {
        try await service.objects.emitSignal(path: path, interface: interface, member: "ActionInvoked", [
            .uint32(id), .string(key),
        ])
        try await service.objects.emitSignal(path: path, interface: interface, member: "NotificationClosed", [
            .uint32(id), .uint32(2),
        ])
    }
}

/// `org.freedesktop.FileManager1` at `/org/freedesktop/FileManager1`, recording `ShowItems(as uris, s startupId)`.
enum FakeFileManager {
    static func start(on bus: PrivateBus) async throws -> FakeService {
        let fileManager = DBusInterfaceDescription(
            name: "org.freedesktop.FileManager1",
            methods: [
                .init("ShowFolders", inputs: [.init("uris", .array(.string)), .init("startupId", .string)]),
                .init("ShowItems", inputs: [.init("uris", .array(.string)), .init("startupId", .string)]),
                .init("ShowItemProperties", inputs: [.init("uris", .array(.string)), .init("startupId", .string)]),
            ]
        )
        return try await FakeService.start(on: bus, name: "org.freedesktop.FileManager1") { objects, log in
            try await objects.export(
                [
                    DBusExportedInterface(
                        fileManager,
                        methods: [
                            "ShowFolders": FakeService.recording(log), "ShowItems": FakeService.recording(log),
                            "ShowItemProperties": FakeService.recording(log),
                        ]
                    )
                ],
                at: "/org/freedesktop/FileManager1"
            )
        }
    }
}

/// `org.kde.StatusNotifierWatcher` at `/StatusNotifierWatcher`, recording `RegisterStatusNotifierItem(s)`.
enum FakeStatusNotifierWatcher {
    static let name = "org.kde.StatusNotifierWatcher"

    static let watcher = DBusInterfaceDescription(
        name: "org.kde.StatusNotifierWatcher",
        methods: [
            .init("RegisterStatusNotifierItem", inputs: [.init("service", .string)]),
            .init("RegisterStatusNotifierHost", inputs: [.init("service", .string)]),
        ],
        signals: [
            .init("StatusNotifierItemRegistered", [.init("service", .string)]),
            .init("StatusNotifierItemUnregistered", [.init("service", .string)]),
            .init("StatusNotifierHostRegistered"),
        ],
        properties: [
            .init("RegisteredStatusNotifierItems", .array(.string)),
            .init("IsStatusNotifierHostRegistered", .boolean),
            .init("ProtocolVersion", .int32),
        ]
    )

    static func start(on bus: PrivateBus) async throws -> FakeService {
        try await FakeService.start(on: bus, name: name) { objects, log in
            try await objects.export(
                [
                    DBusExportedInterface(
                        watcher,
                        methods: [
                            "RegisterStatusNotifierItem": FakeService.recording(log),
                            "RegisterStatusNotifierHost": FakeService.recording(log),
                        ],
                        properties: [
                            "RegisteredStatusNotifierItems": .strings([]),
                            "IsStatusNotifierHostRegistered": .boolean(true),
                            "ProtocolVersion": .int32(0),
                        ]
                    )
                ],
                at: "/StatusNotifierWatcher"
            )
        }
    }
}

/// `org.freedesktop.Notifications` at `/org/freedesktop/Notifications`, recording
/// `Notify(s, u, s, s, s, as, a{sv}, i) → u` (answering 1, 2, 3, … in turn) and `GetCapabilities() → as`, which
/// lists `capabilities`; ``press(_:on:of:)`` sends what a click on a button sends.
enum FakeNotifications {
    static let interface = "org.freedesktop.Notifications"
    static let path: ObjectPath = "/org/freedesktop/Notifications"

    static func start(
        on bus: PrivateBus, capabilities: [String] = ["actions", "body", "body-markup"]
    ) async throws -> FakeService {
        let notifications = DBusInterfaceDescription(
            name: "org.freedesktop.Notifications",
            methods: [
                .init(
                    "Notify",
                    inputs: [
                        .init("app_name", .string), .init("replaces_id", .uint32), .init("app_icon", .string),
                        .init("summary", .string), .init("body", .string), .init("actions", .array(.string)),
                        .init("hints", .dictionary(key: .string, value: .variant)), .init("expire_timeout", .int32),
                    ],
                    outputs: [.init("id", .uint32)]
                ),
                .init("GetCapabilities", inputs: [], outputs: [.init("capabilities", .array(.string))]),
            ],
            signals: [
                .init("ActionInvoked", [.init("id", .uint32), .init("action_key", .string)]),
                .init("NotificationClosed", [.init("id", .uint32), .init("reason", .uint32)]),
            ]
        )
        return try await FakeService.start(on: bus, name: "org.freedesktop.Notifications") { objects, log in
            try await objects.export(
                [
                    DBusExportedInterface(
                        notifications,
                        methods: [
                            "Notify": { call in
                                await log.record(call)
                                return [.uint32(UInt32(await log.calls("Notify").count))]
                            },
                            "GetCapabilities": FakeService.recording(log, reply: [.strings(capabilities)]),
                        ]
                    )
                ],
                at: "/org/freedesktop/Notifications"
            )
        }
    }
}
