import DBusKit
import HaulContract
import HaulCore
import HaulTransfer

/// `org.haul.Haul1.Manager`: validates transfer requests and hands them to the task service.
enum ManagerService {
    /// `callers` says which process called (for `Application`): hauld's connection, which asks the bus.
    static func exportedInterface(tasks: TaskService, callers: any CallerProcesses) async -> DBusExportedInterface {
        DBusExportedInterface(
            HaulInterfaces.manager,
            methods: ManagerMethod.handlers([
                .download: { call in
                    try await download(call, options: [:], tasks: tasks, callers: callers)
                },
                .downloadWithOptions: { call in
                    try await download(
                        call, options: try vardict(call.arguments[2]), tasks: tasks, callers: callers
                    )
                },
                .upload: { call in
                    try await upload(call, options: [:], tasks: tasks, callers: callers)
                },
                .uploadWithOptions: { call in
                    try await upload(
                        call, options: try vardict(call.arguments[2]), tasks: tasks, callers: callers
                    )
                },
                .listTasks: { _ in [.objectPaths(await tasks.list())] },
                .suspendAll: { _ in await tasks.forEachTask(.suspend); return [] },
                .resumeAll: { _ in await tasks.forEachTask(.resume); return [] },
                .cancelAll: { _ in await tasks.forEachTask(.cancel); return [] },
            ]),
            properties: ManagerProperty.values(
                await properties(tasks.settings).merging(await tasks.conditionProperties) { $1 }
            ),
            setProperty: { name, value, _ in
                // The object server lets through writes of read-write properties only.
                switch ManagerProperty(rawValue: name) {
                case .defaultConnections: try await tasks.setDefaultConnections(value)
                case .downloadRateLimit: try await tasks.setGlobalRateLimit(.download, value)
                case .uploadRateLimit: try await tasks.setGlobalRateLimit(.upload, value)
                case .maxRunningTasks: try await tasks.setMaxRunningTasks(value)
                case .inhibitSleep: try await tasks.setInhibitSleep(value)
                case .networkState, .metered, .powerSaver, nil: break
                }
            },
            // A new task waits for its record to be durable: meanwhile the next calls go on, and the next new tasks
            // share the disk's syncs. No client can name a task before its creation has answered.
            concurrentMethods: Set(
                [ManagerMethod.download, .downloadWithOptions, .upload, .uploadWithOptions].map(\.rawValue)
            ),
            // Ten thousand tasks take seconds: other clients are answered between two batches of tasks.
            interleavedMethods: Set([ManagerMethod.suspendAll, .resumeAll, .cancelAll].map(\.rawValue))
        )
    }

    private static func properties(_ settings: ManagerSettings) -> [ManagerProperty: DBusValue] {
        [
            .defaultConnections: .uint32(settings.defaultConnections),
            .downloadRateLimit: .uint64(settings.downloadRateLimit),
            .uploadRateLimit: .uint64(settings.uploadRateLimit),
            .maxRunningTasks: .uint32(settings.maxRunningTasks),
            .inhibitSleep: .boolean(settings.inhibitSleep),
        ]
    }

    private static func download(
        _ call: DBusMethodCall, options: [String: DBusValue], tasks: TaskService, callers: any CallerProcesses
    ) async throws -> [DBusValue]
    {
        let arguments = call.arguments
        let (url, destination) = try request { () throws(TransferRequestError) in
            (
                try TransferURL(arguments[0].stringValue ?? ""),
                try DownloadDestination(arguments[1].stringValue ?? "", downloadsFolder: UserDownloadsFolder.resolve)
            )
        }
        var decoded = try TransferOptionsDecoder.download(options)
        decoded.application = await CallerIdentity.application(
            of: call.sender, claimed: decoded.claimedApplication, callers: callers
        )
        return [.objectPath(try await tasks.download(url: url, destination: destination, options: decoded))]
    }

    private static func upload(
        _ call: DBusMethodCall, options: [String: DBusValue], tasks: TaskService, callers: any CallerProcesses
    ) async throws -> [DBusValue]
    {
        let arguments = call.arguments
        let (url, path) = try request { () throws(TransferRequestError) in
            (try TransferURL(arguments[0].stringValue ?? ""), try LocalPath(arguments[1].stringValue ?? ""))
        }
        var decoded = try TransferOptionsDecoder.upload(options)
        decoded.application = await CallerIdentity.application(
            of: call.sender, claimed: nil, callers: callers
        )
        return [.objectPath(try await tasks.upload(url: url, source: path, options: decoded))]
    }

    private static func vardict(_ value: DBusValue) throws(DBusError) -> [String: DBusValue] {
        guard let dictionary = value.stringDictionary else {
            throw HaulErrorName.invalidArgument.error("options have a duplicate key")
        }
        return dictionary.mapValues { $0.unwrappedVariant }
    }
}

/// Runs request validation, turning its errors into the contract's error names.
func request<T>(_ body: () throws(TransferRequestError) -> T) throws(DBusError) -> T {
    do {
        return try body()
    } catch .unsupportedScheme(let scheme) {
        throw HaulErrorName.unsupportedScheme.error(TransferRequestError.unsupportedScheme(scheme).description)
    } catch {
        throw HaulErrorName.invalidArgument.error(error.description)
    }
}

extension DBusValue {
    /// An `a{sv}` entry's value without its variant wrapper.
    var unwrappedVariant: DBusValue { if case .variant(let inner) = self { inner } else { self } }
}
