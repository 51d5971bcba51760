import DBusKit
package import FoundationEssentials
package import HaulCore
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
        package var desktop: DesktopBridge.Features

        package init(
            busAddress: String? = nil, stateDirectory: URL, readTimeout: Duration = .seconds(30),
            proxies: ProxySettings = .none, trust: TrustStore = .resolve(environment: [:]),
            desktop: DesktopBridge.Features = .init()
        ) {
            self.busAddress = busAddress
            self.stateDirectory = stateDirectory
            self.readTimeout = readTimeout
            self.proxies = proxies
            self.trust = trust
            self.desktop = desktop
        }

        /// `$XDG_STATE_HOME/haul`, else `~/.local/state/haul`.
        package static func defaultStateDirectory(environment: [String: String]) -> URL {
            if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
                return URL(fileURLWithPath: state).appendingPathComponent("haul")
            }
            let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path(percentEncoded: false)
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
        let indicator = ActivityIndicatorService(objects: objects, store: store, logger: logger)
        var clientConfiguration = TransferClient.Configuration()
        clientConfiguration.readTimeout = configuration.readTimeout
        clientConfiguration.proxies = configuration.proxies
        clientConfiguration.trust = configuration.trust
        for line in configuration.proxies.summary { logger.info("\(line)") }
        logger.info("https trusts \(configuration.trust)")
        let tasks = TaskService(
            objects: objects, indicator: indicator, client: TransferClient(configuration: clientConfiguration),
            store: TaskStore(directory: configuration.stateDirectory.appendingPathComponent("tasks")),
            settingsURL: configuration.stateDirectory.appendingPathComponent("manager.json"), logger: logger
        )

        // Subscribed before anything is exported, so that it sees every task from the first.
        let bridge = await desktopBridge(following: connection.uniqueName)
        await objects.addObjectManager(at: HaulBus.rootPath)
        try await objects.export(
            [await ManagerService.exportedInterface(tasks: tasks), await indicator.exportedInterface()],
            at: HaulBus.managerPath
        )
        await objects.onPeerVanished { name in await indicator.releaseHolds(of: name) }

        try await withThrowingDiscardingTaskGroup { group in
            // The tasks' outbox is sent from the start: restoring exports every task through it.
            group.addTask { await tasks.publishing() }
            // Before the name is taken, so that the first caller already sees every task.
            await tasks.restore()
            switch try await connection.requestName(HaulBus.name) {
            case .primaryOwner, .alreadyOwner:
                break
            case .exists, .inQueue:
                await bridge?.stop()
                await connection.close()
                throw Failure.nameTaken(HaulBus.name)
            }
            logger.info("hauld is serving \(HaulBus.name)", metadata: ["unique-name": "\(connection.uniqueName)"])
            await tasks.continueRestored()

            group.addTask { await indicator.run() }
            if let bridge { group.addTask { await bridge.run() } }
            // Ends on a graceful shutdown (SIGTERM, SIGINT) or when the bus connection is lost.
            await cancelWhenGracefulShutdown { await objects.run() }
            await bridge?.stop()
            // Attempts stop without touching the saved states: the next start continues every task. This also
            // ends the tasks' outbox, once sent.
            await tasks.shutdown()
            group.cancelAll()
        }
        let connected = await connection.isConnected
        let lostBus = !Task.isShuttingDownGracefully && !connected
        await connection.close()
        if lostBus { throw Failure.busDisconnected }
        logger.info("hauld stopped")
    }

    private func connect() async throws -> DBusConnection {
        if let address = configuration.busAddress {
            try await DBusConnection.connect(address: address)
        } else {
            try await DBusConnection.sessionBus()
        }
    }

    /// The desktop bridge on a connection of its own (it is hauld's client), subscribed to hauld's connection
    /// `daemon`. Without one, hauld goes on: panels are a convenience.
    private func desktopBridge(following daemon: String) async -> DesktopBridge? {
        guard !configuration.desktop.isEmpty else { return nil }
        do {
            let bridge = DesktopBridge(
                connection: try await connect(), daemon: daemon, features: configuration.desktop, logger: logger
            )
            try await bridge.subscribe()
            return bridge
        } catch {
            logger.warning("no desktop integration: \(error)")
            return nil
        }
    }
}
