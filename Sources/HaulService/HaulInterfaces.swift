package import DBusKit

/// The Swift description of the D-Bus contract; `dbus/org.haul.Haul1.xml` documents the same members and a
/// test holds the two together.
package enum HaulInterfaces {
    private typealias Method = DBusInterfaceDescription.Method
    private typealias Signal = DBusInterfaceDescription.Signal
    private typealias Property = DBusInterfaceDescription.Property
    private typealias Argument = DBusInterfaceDescription.Argument

    private static let options = DBusType.dictionary(key: .string, value: .variant)

    package static let manager = DBusInterfaceDescription(
        name: HaulBus.managerInterface,
        methods: [
            Method("Download", inputs: [.init("url", .string), .init("destination", .string)],
                   outputs: [.init("task", .objectPath)]),
            Method("DownloadWithOptions",
                   inputs: [.init("url", .string), .init("destination", .string), .init("options", options)],
                   outputs: [.init("task", .objectPath)]),
            Method("Upload", inputs: [.init("url", .string), .init("source", .string)],
                   outputs: [.init("task", .objectPath)]),
            Method("UploadWithOptions",
                   inputs: [.init("url", .string), .init("source", .string), .init("options", options)],
                   outputs: [.init("task", .objectPath)]),
            Method("ListTasks", outputs: [.init("tasks", .array(.objectPath))]),
            Method("SuspendAll"),
            Method("ResumeAll"),
            Method("CancelAll"),
        ],
        signals: [
            Signal("TaskDidResume", [.init("task", .objectPath)]),
            Signal("TaskDidSuspend", [.init("task", .objectPath)]),
            Signal("TaskDidComplete",
                   [.init("task", .objectPath), .init("error_name", .string), .init("error_message", .string)]),
        ],
        properties: [
            Property("DefaultConnections", .uint32, access: .readwrite),
        ]
    )

    package static let activityIndicator = DBusInterfaceDescription(
        name: HaulBus.indicatorInterface,
        methods: [Method("IncrementActivityCount"), Method("DecrementActivityCount")],
        signals: [Signal("VisibilityChanged", [.init("visible", .boolean)])],
        properties: [
            Property("Visible", .boolean),
            Property("State", .string),
            Property("ActivityCount", .uint32),
            Property("Enabled", .boolean, access: .readwrite),
            Property("ActivationDelay", .double, access: .readwrite),
            Property("CompletionDelay", .double, access: .readwrite),
        ]
    )

    package static let task = DBusInterfaceDescription(
        name: HaulBus.taskInterface,
        methods: [Method("Suspend"), Method("Resume"), Method("Cancel"), Method("Forget")],
        properties: [
            Property("Id", .uint32),
            Property("Kind", .string),
            Property("URL", .string),
            Property("Path", .string),
            Property("State", .string),
            Property("BytesReceived", .uint64),
            Property("BytesExpectedToReceive", .int64),
            Property("BytesSent", .uint64),
            Property("BytesExpectedToSend", .int64),
            Property("DownloadProgress", .double),
            Property("UploadProgress", .double),
            Property("Rate", .uint64),
            Property("Cancellable", .boolean),
            Property("Pausable", .boolean),
            Property("Resumable", .boolean),
            Property("ErrorName", .string),
            Property("ErrorMessage", .string),
            Property("HTTPStatus", .uint32),
            Property("Connections", .uint32, access: .readwrite),
        ]
    )

    package static let all = [manager, activityIndicator, task]
}
