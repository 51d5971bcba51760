import ArgumentParser
import FoundationEssentials
import HaulCore
import HaulDesktop
import HaulService
import Logging
import ServiceLifecycle
import UnixSignals

struct Hauld: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hauld",
        abstract: "The Haul daemon: background HTTP(S) transfers and the network-activity indicator on D-Bus.",
        discussion: """
            Serves org.haul.Haul1 on the session bus until SIGTERM or SIGINT (exit status 0). Exits with 3 when \
            another hauld owns the name, and with 1 on other failures, such as losing the bus.
            """
    )

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical (default: $HAULD_LOG_LEVEL or info).")
    var logLevel: String?

    @Option(help: "Connect to this D-Bus address instead of the session bus.")
    var address: String?

    @Option(help: "Keep settings and tasks here (default: $XDG_STATE_HOME/haul).")
    var stateDirectory: String?

    @Option(help: ArgumentHelp("Seconds a response may stay silent before the attempt is retried.", valueName: "S"))
    var readTimeout: Double = 30

    @Flag(help: "Do not show transfers as KDE jobs (default: $HAULD_JOB_VIEW, else on).")
    var noJobView = false

    @Flag(help: "Do not show a tray icon (StatusNotifierItem) (default: $HAULD_STATUS_NOTIFIER, else on).")
    var noStatusNotifier = false

    @Flag(help: "Notify the desktop of every transfer that completes or fails, even those KDE jobs show.")
    var notify = false

    @Flag(
        help: """
            Do not notify the desktop when transfers end (default: $HAULD_NOTIFY, else every transfer no KDE job \
            shows).
            """
    )
    var noNotify = false

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        if notify && noNotify { throw ValidationError("--notify and --no-notify exclude each other") }
        guard readTimeout > 0, readTimeout <= 3600 else {
            throw ValidationError("--read-timeout must be between 0 and 3600 seconds")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let level = (logLevel ?? environment["HAULD_LOG_LEVEL"]).flatMap(Logger.Level.init(rawValue:)) ?? .info
        let journal = environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in
            var handler = StderrLogHandler(label: label, journal: journal)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hauld")
        let (desktop, problems) = DesktopFeatures.resolve(
            noJobView: noJobView, noStatusNotifier: noStatusNotifier, notify: notify, noNotify: noNotify,
            environment: environment
        )
        for problem in problems { logger.warning("\(problem)") }

        let daemon = HaulDaemon(
            configuration: .init(
                busAddress: address,
                stateDirectory: stateDirectory.map { URL(fileURLWithPath: $0) }
                    ?? HaulDaemon.Configuration.defaultStateDirectory(environment: environment),
                readTimeout: .milliseconds(Int64(readTimeout * 1000)),
                proxies: ProxySettings(environment: environment),
                trust: TrustStore.resolve(environment: environment),
                desktop: desktop,
                icons: IconLocation.locate(environment: environment)
            ),
            logger: logger
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: daemon)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            // ServiceGroup rethrows the service's own error.
            logger.critical("\(error)")
            if case .nameTaken = error as? HaulDaemon.Failure { throw ExitCode(Self.nameTakenStatus) }
            throw ExitCode.failure
        }
    }

    /// Distinct so that the systemd unit can stop restarting (`RestartPreventExitStatus=`).
    static let nameTakenStatus: Int32 = 3
}
