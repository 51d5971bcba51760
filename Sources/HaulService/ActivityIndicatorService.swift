package import DBusKit
import FoundationEssentials
import HaulContract
package import HaulCore
package import Logging
package import ServiceKit

/// Runs the delayed activity manager on the bus: owns the pure state machine, the per-client
/// holds and the persisted settings, executes the machine's actions (timers, publications) and exports
/// `org.haul.Haul1.ActivityIndicator`.
///
/// Publications go through an ordered outbox drained by `run()`, so signals leave in exactly the order the
/// machine produced them, even though sending to the bus suspends. A method call or property write answers
/// only once its own changes are applied, so the caller reads what it caused.
package actor ActivityIndicatorService {
    private typealias Machine = ActivityIndicatorStateMachine<ContinuousClock.Instant>

    private let clock: any ServiceClock
    private var machine: Machine
    private var settings: IndicatorSettings
    private let store: IndicatorSettingsStore
    /// Writes the settings off the actor.
    private let writer: TaskRecordWriter
    private var holds = ActivityHolds()
    private var runningTasks: UInt32 = 0
    private var timers: [ActivityIndicatorTimer: Task<Void, Never>] = [:]
    private let objects: any ServiceBus
    private let logger: Logger
    private let outbox = Outbox<Publication>()

    /// One batch of property changes, and the visibility signal when visibility really changed.
    private struct Publication {
        let properties: [String: DBusValue]
        let visibility: Bool?
    }

    /// `clock` is hauld's `EventLoopClock` unless a test moves time by hand.
    package init(
        objects: any ServiceBus, store: IndicatorSettingsStore, writer: TaskRecordWriter? = nil,
        clock: any ServiceClock = EventLoopClock(), logger: Logger
    ) {
        let loaded = store.load()
        if let problem = loaded.problem {
            logger.warning("ignoring the saved indicator settings: \(problem)")
        }
        settings = loaded.settings
        machine = Machine(
            activationDelay: settings.activationDuration, completionDelay: settings.completionDuration,
            isEnabled: settings.enabled
        )
        self.store = store
        // A writer of its own when hauld shares none (its store's folder is never used: it writes no records).
        self.writer = writer ?? TaskRecordWriter(store: TaskStore(directory: store.url.deletingLastPathComponent()))
        self.clock = clock
        self.objects = objects
        self.logger = logger
    }

    /// The interface to export at `/org/haul/Haul1/Manager`, with the current values.
    package func exportedInterface() -> DBusExportedInterface {
        DBusExportedInterface(
            HaulInterfaces.activityIndicator,
            methods: IndicatorMethod.handlers([
                .incrementActivityCount: { [self] call in
                    await self.increment(owner: call.sender)
                    await self.settled()
                    return []
                },
                .decrementActivityCount: { [self] call in
                    await self.decrement(owner: call.sender)
                    await self.settled()
                    return []
                },
            ]),
            properties: IndicatorProperty.values([
                .visible: .boolean(machine.isVisible),
                .state: .string(IndicatorStateName(machine.state).rawValue),
                .activityCount: .uint32(machine.activityCount),
                .enabled: .boolean(settings.enabled),
                .activationDelay: .double(settings.activationDelay),
                .completionDelay: .double(settings.completionDelay),
            ]),
            setProperty: { [self] name, value, _ in
                try await self.set(name, value)
                await self.settled()
            }
        )
    }

    /// Publishes until cancelled.
    package func run() async {
        await outbox.run { publication, _ in await publish(publication) }
        timers.values.forEach { $0.cancel() }
    }

    private func publish(_ publication: Publication) async {
        do {
            try await objects.updateProperties(
                publication.properties, interface: HaulBus.indicatorInterface, at: HaulBus.managerPath
            )
            if let visible = publication.visibility {
                try await objects.emitSignal(
                    path: HaulBus.managerPath, interface: HaulBus.indicatorInterface,
                    member: IndicatorSignal.visibilityChanged.rawValue,
                    [.boolean(visible)]
                )
            }
        } catch {
            logger.error("could not publish the indicator state: \(error)")
        }
    }

    /// Returns once every change queued so far is on the bus (at once when `run()` has ended).
    private func settled() async {
        await outbox.settled()
    }

    // MARK: Activity

    /// Manual activity, owned by the caller's connection.
    package func increment(owner: String) {
        holds.increment(owner)
        recount()
    }

    /// Clamps at zero for this caller; never touches another caller's holds.
    package func decrement(owner: String) {
        if holds.decrement(owner) { recount() }
    }

    /// A caller left the bus: whatever it still held is released.
    package func releaseHolds(of owner: String) {
        let released = holds.release(owner)
        if released > 0 {
            logger.debug("released \(released) activity hold(s) of \(owner), which left the bus")
            recount()
        }
    }

    /// The transfer engine reports how many tasks are running.
    package func setRunningTaskCount(_ count: UInt32) {
        runningTasks = count
        recount()
    }

    private var activityCount: UInt32 {
        UInt32(clamping: UInt64(runningTasks) + UInt64(holds.total))
    }

    /// The count is derived from the truth (running tasks + live holds), never counted up and down.
    private func recount() {
        let count = activityCount
        perform(machine.activityCountChanged(to: count, now: clock.now), also: [.activityCount: .uint32(count)])
    }

    // MARK: Settings

    private func set(_ name: String, _ value: DBusValue) async throws {
        var updated = settings
        switch (IndicatorProperty(rawValue: name), value) {
        case (.enabled?, .boolean(let enabled)):
            updated.enabled = enabled
        case (.activationDelay?, .double(let seconds)):
            updated.activationDelay = try validated(seconds, name)
        case (.completionDelay?, .double(let seconds)):
            updated.completionDelay = try validated(seconds, name)
        default:
            throw DBusError.invalidArgs("\(name) cannot be set to \(value)")
        }
        let now = clock.now
        if updated.enabled != settings.enabled {
            perform(machine.enabledChanged(updated.enabled, now: now))
        }
        if updated.activationDelay != settings.activationDelay || updated.completionDelay != settings.completionDelay {
            perform(
                machine.delaysChanged(
                    activation: updated.activationDuration, completion: updated.completionDuration, now: now
                )
            )
        }
        settings = updated
        do {
            try await store.save(updated, with: writer)
        } catch {
            logger.warning("the indicator settings apply now but could not be saved: \(error)")
        }
    }

    private func validated(_ seconds: Double, _ name: String) throws(DBusError) -> Double {
        do {
            _ = try IndicatorSettings.validatedDelay(seconds, name: name)
            return seconds
        } catch {
            throw DBusError.invalidArgs(error.description)
        }
    }

    // MARK: Actions

    private func perform(_ actions: [Machine.Action], also extra: [IndicatorProperty: DBusValue] = [:]) {
        var properties = extra
        var visibility: Bool?
        for action in actions {
            switch action {
            case .armTimer(let kind, let deadline, let generation):
                timers[kind]?.cancel()
                timers[kind] = clock.timer(at: deadline) { [weak self] in
                    await self?.timerFired(kind, generation: generation)
                }
            case .cancelTimer(let kind):
                timers.removeValue(forKey: kind)?.cancel()
            case .publishState(let state):
                properties[.state] = .string(IndicatorStateName(state).rawValue)
            case .setVisible(let visible):
                properties[.visible] = .boolean(visible)
                visibility = visible
            }
        }
        if !properties.isEmpty { outbox.send(Publication(properties: properties.byName, visibility: visibility)) }
    }

    private func timerFired(_ kind: ActivityIndicatorTimer, generation: UInt64) {
        perform(machine.timerFired(kind, generation: generation, now: clock.now))
    }
}
