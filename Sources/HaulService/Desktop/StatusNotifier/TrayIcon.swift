import DBusKit
import Logging

/// The tray icon on the bus: exports the StatusNotifierItem, registers it with the watcher (again whenever a
/// watcher appears), shows the indicator's visibility as its `Status` and sums up the transfers in its tooltip.
///
/// `Status` changes go out at once; the tooltip, which follows progress, is worked out at most once a second (not on
/// every progress signal) and goes out when it changed.
actor TrayIcon {
    static let toolTipInterval: Duration = .seconds(1)

    private let objects: DBusObjectServer
    private let currentToolTip: @Sendable () async -> TrayToolTip
    private let logger: Logger
    private let clock = EventLoopClock()
    private var toolTip: TrayToolTip
    private var toolTipChecked: ContinuousClock.Instant?
    private var toolTipTimer: Task<Void, Never>?

    /// Exports the item with its first values; `currentToolTip` works out the tooltip when it is due.
    init(
        objects: DBusObjectServer, visible: Bool, toolTip: TrayToolTip,
        currentToolTip: @escaping @Sendable () async -> TrayToolTip, logger: Logger
    ) async throws {
        self.objects = objects
        self.toolTip = toolTip
        self.currentToolTip = currentToolTip
        self.logger = logger
        try await objects.export(
            [StatusNotifierItem.exportedInterface(visible: visible, toolTip: toolTip)], at: StatusNotifierItem.path
        )
        logger.info("tray icon at \(objects.connection.uniqueName) \(StatusNotifierItem.path)")
    }

    /// `RegisterStatusNotifierItem` with this connection's unique name.
    func register() async {
        do {
            _ = try await objects.connection.call(
                destination: StatusNotifierItem.watcherName, path: StatusNotifierItem.watcherPath,
                interface: StatusNotifierItem.watcherInterface, member: "RegisterStatusNotifierItem",
                [.string(objects.connection.uniqueName)], timeout: .seconds(5)
            )
            logger.debug("registered the tray icon with \(StatusNotifierItem.watcherName)")
        } catch {
            logger.warning("could not register the tray icon: \(error)")
        }
    }

    func setVisible(_ visible: Bool) async {
        let status = StatusNotifierItem.status(visible: visible)
        do {
            try await objects.updateProperties(
                ["Status": .string(status)], interface: StatusNotifierItem.interface, at: StatusNotifierItem.path
            )
            try await objects.emitSignal(
                path: StatusNotifierItem.path, interface: StatusNotifierItem.interface, member: "NewStatus",
                [.string(status)]
            )
        } catch {
            logger.error("could not publish the tray icon's status: \(error)")
        }
    }

    /// The transfers changed: the tooltip is checked now if the last check was a second ago or more, else when
    /// that second is over.
    func transfersChanged() async {
        guard toolTipTimer == nil else { return }
        let due = toolTipChecked.map { $0 + Self.toolTipInterval } ?? clock.now
        guard due > clock.now else { return await publishToolTip() }
        toolTipTimer = Task { [clock] in
            try? await Task.sleep(until: due, clock: clock)
            guard !Task.isCancelled else { return }
            await self.publishToolTip()
        }
    }

    func stop() {
        toolTipTimer?.cancel()
        toolTipTimer = nil
    }

    private func publishToolTip() async {
        toolTipTimer = nil
        toolTipChecked = clock.now
        let new = await currentToolTip()
        guard new != toolTip else { return }
        toolTip = new
        do {
            try await objects.updateProperties(
                ["ToolTip": new.value], interface: StatusNotifierItem.interface, at: StatusNotifierItem.path
            )
            try await objects.emitSignal(
                path: StatusNotifierItem.path, interface: StatusNotifierItem.interface, member: "NewToolTip"
            )
        } catch {
            logger.error("could not publish the tray icon's tooltip: \(error)")
        }
    }
}
