import DBusKit
import HaulContract
package import FoundationEssentials
package import HaulCore
package import HaulDesktop
import HaulTransfer
package import Logging
import ServiceLifecycle

/// `hauld` as a service: connects to the bus, exports the Haul objects, then takes `org.haul.Haul1` — last,
/// so the first caller already finds everything in place — and serves until a graceful shutdown.
package struct HaulDaemon: Service {
    package struct Configuration: Sendable {
        /// A D-Bus address; nil for the session bus.
        package var busAddress: String?
        /// Where settings and tasks are kept (`$XDG_STATE_HOME/haul`).
        package var stateDirectory: URL
        /// How long a response may stay silent before the attempt counts as stalled (and is retried).
        package var readTimeout: Duration
        /// Proxies for transfers (`ProxySettings(environment:)` reads them as curl does).
        package var proxies: ProxySettings
        /// The CA certificates https trusts (`TrustStore.resolve(environment:)`: the system's, or `SSL_CERT_FILE` and
        /// `SSL_CERT_DIR`).
        package var trust: TrustStore
        /// The panels the desktop bridge serves (KDE job views, tray icon, notifications).
        package var desktop: DesktopFeatures
        /// Where the desktop finds Haul's icons.
        package var icons: IconLocation

        package init(
            busAddress: String? = nil, stateDirectory: URL, readTimeout: Duration = .seconds(30),
            proxies: ProxySettings = .none, trust: TrustStore = .resolve(environment: [:]),
            desktop: DesktopFeatures = .init(), icons: IconLocation = .init()
        ) {
            self.busAddress = busAddress
            self.stateDirectory = stateDirectory
            self.readTimeout = readTimeout
            self.proxies = proxies
            self.trust = trust
            self.desktop = desktop
            self.icons = icons
        }

        /// `$XDG_STATE_HOME/haul`, else `~/.local/state/haul`.
        package static func defaultStateDirectory(environment: [String: String]) -> URL {
            if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
                return URL(fileURLWithPath: state).appendingPathComponent("haul")
            }
            let home =
                environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path(percentEncoded: false)
            return URL(fileURLWithPath: home).appendingPathComponent(".local/state/haul")
        }
    }

    package enum Failure: Error, CustomStringConvertible {
        case nameTaken(String)
        case busDisconnected

        package var description: String {
            switch self {
            case .nameTaken(let name):
                "another hauld already owns \(name) on this bus; only one can run per session"
            case .busDisconnected:
                "the session bus went away"
            }
        }
    }

    private let configuration: Configuration
    private let logger: Logger

    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    package func run() async throws {
        let connection = try await connect()
        let objects = try await DBusObjectServer(connection: connection)
        let store = IndicatorSettingsStore(
            url: configuration.stateDirectory.appendingPathComponent("indicator.json")
        )
        // Every durable write of hauld's state goes through this one thread, in group commits.
        let taskStore = TaskStore(directory: configuration.stateDirectory.appendingPathComponent("tasks"))
        let writer = TaskRecordWriter(store: taskStore)
        let indicator = ActivityIndicatorService(objects: objects, store: store, writer: writer, logger: logger)
        var clientConfiguration = TransferClient.Configuration()
        clientConfiguration.readTimeout = configuration.readTimeout
        clientConfiguration.proxies = configuration.proxies
        clientConfiguration.trust = configuration.trust
        for line in configuration.proxies.summary { logger.info("\(line)") }
        logger.info("https trusts \(configuration.trust)")
        // What async-http-client frees a minute after the load, when it closes its pooled connections, and what calls
        // left behind once they stop.
        let trim = HeapTrim()
        let calls = try await connection.messages(matching: [.methodCalls])
        let rates = RateGate()
        let attempts = TransferAttempts(client: TransferClient(configuration: clientConfiguration), rates: rates) {
            await trim.connectionReleased()
        }
        let tasks = TaskService(
            objects: objects, indicator: indicator, attempts: attempts, rates: rates,
            store: taskStore, records: writer,
            settingsURL: configuration.stateDirectory.appendingPathComponent("manager.json"),
            clock: EventLoopClock(coalescingWith: rates), logger: logger
        )

        // Following the object server before anything is exported, so that it sees every task from the first.
        let bridge = await desktopBridge(following: objects)
        await objects.addObjectManager(at: HaulBus.rootPath)
        try await objects.export(
            [
                await ManagerService.exportedInterface(tasks: tasks, callers: connection),
                await indicator.exportedInterface(),
            ],
            at: HaulBus.managerPath
        )
        await objects.onPeerVanished { name in await indicator.releaseHolds(of: name) }

        try await withThrowingDiscardingTaskGroup { group in
            // The tasks' outbox is sent from the start: restoring exports every task through it.
            group.addTask { await tasks.run() }
            // Before the name is taken, so that the first caller already sees every task.
            if let bridge {
                await tasks.restore { restored in await bridge.tasksRestored(restored) }
            } else {
                await tasks.restore()
            }
            switch try await connection.requestName(HaulBus.name) {
            case .primaryOwner, .alreadyOwner:
                break
            case .exists, .inQueue:
                await bridge?.stop()
                await connection.close()
                throw Failure.nameTaken(HaulBus.name)
            }
            logger.info("hauld is serving \(HaulBus.name)", metadata: ["unique-name": "\(connection.uniqueName)"])
            // Calls are answered meanwhile: ten thousand restored tasks take a second or two to rejoin the queue.
            group.addTask { await tasks.continueRestored() }

            group.addTask { for await _ in calls { await trim.callReceived() } }
            group.addTask { await indicator.run() }
            if let bridge { group.addTask { await bridge.run() } }
            let system = await followSystem(tasks: tasks, in: &group)
            // Ends on a graceful shutdown (SIGTERM, SIGINT) or when the bus connection is lost.
            await cancelWhenGracefulShutdown { await objects.run() }
            await bridge?.stop()
            // Attempts stop without touching the saved states: the next start continues every task. This also
            // ends the tasks' outbox, once sent.
            await tasks.shutdown()
            await system?.close()
            await trim.cancel()
            group.cancelAll()
        }
        let connected = await connection.isConnected
        let lostBus = !Task.isShuttingDownGracefully && !connected
        await connection.close()
        if lostBus { throw Failure.busDisconnected }
        logger.info("hauld stopped")
    }

    /// NetworkManager, power-profiles-daemon and logind on the system bus, followed for the scheduler. Without a
    /// system bus hauld goes on as before: no task waits but for a slot. Returns the connection, to close at the end.
    private func followSystem(tasks: TaskService, in group: inout ThrowingDiscardingTaskGroup<any Error>) async
        -> DBusConnection?
    {
        let system: DBusConnection
        do {
            system = try await DBusConnection.systemBus()
        } catch {
            logger.info("no system bus (\(error)): not following the network, power or sleep")
            return nil
        }
        let network = NetworkMonitor(connection: system)
        let power = PowerProfileMonitor(connection: system)
        let sleep = SleepInhibitor(connection: system)
        await tasks.useSleepInhibitor(sleep)
        group.addTask { await network.run() }
        group.addTask { await power.run() }
        group.addTask { await sleep.run() }
        group.addTask { for await reading in network.readings { await tasks.networkChanged(reading) } }
        group.addTask { for await saver in power.powerSaver { await tasks.powerSaverChanged(saver) } }
        group.addTask { for await sleeping in sleep.prepareForSleep { await tasks.prepareForSleep(sleeping) } }
        return system
    }

    private func connect() async throws -> DBusConnection {
        if let address = configuration.busAddress {
            try await DBusConnection.connect(address: address)
        } else {
            try await DBusConnection.sessionBus()
        }
    }

    /// The desktop bridge on a connection of its own (it is hauld's client), hearing what `objects` emits. Without
    /// one, hauld goes on: panels are a convenience.
    private func desktopBridge(following objects: DBusObjectServer) async -> DesktopBridge? {
        let features = configuration.desktop
        guard !features.isEmpty else { return nil }
        do {
            let bus = try await DesktopConnection(
                connection: try await connect(), exportsObjects: features.statusNotifier
            )
            // Plasma shows no popup for a notification from the connection that owns the tray icon.
            let notificationBus: DesktopConnection? =
                features.statusNotifier && features.notifications != .off
                ? try await DesktopConnection(connection: try await connect(), exportsObjects: false) : nil
            let bridge = DesktopBridge(
                bus: bus, notificationBus: notificationBus, daemon: objects.connection.uniqueName,
                hauldSignals: await objects.emittedSignals(), features: features, icons: configuration.icons,
                clock: EventLoopClock(), logger: logger
            )
            try await bridge.subscribe()
            return bridge
        } catch {
            logger.warning("no desktop integration: \(error)")
            return nil
        }
    }
}
