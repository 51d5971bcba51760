import DBusKit
import HaulContract
import HaulCore

/// The machine's conditions, from the system bus (NetworkManager, power-profiles-daemon, logind): fed to the scheduler
/// and shown on the Manager. Without those services nothing calls these, and the scheduler keeps its defaults: no
/// task waits but for a slot.
extension TaskService {
    /// The Manager's read-only `NetworkState`, `Metered` and `PowerSaver`.
    var conditionProperties: [ManagerProperty: DBusValue] {
        [
            .networkState: .string(NetworkStateName(queue.scheduler.networkState).rawValue),
            .metered: .boolean(queue.scheduler.isMetered),
            .powerSaver: .boolean(queue.scheduler.isPowerSaver),
        ]
    }

    /// NetworkManager's view changed (or it came or went).
    func networkChanged(_ reading: NetworkMonitor.Reading) async {
        perform(queue.networkChanged(to: reading.state, metered: reading.metered, now: clock.now))
        outboxInput.yield(.managerProperties(ManagerProperty.values([
            .networkState: .string(NetworkStateName(reading.state).rawValue), .metered: .boolean(reading.metered),
        ])))
        await published()
    }

    func powerSaverChanged(_ powerSaver: Bool) async {
        perform(queue.powerSaverChanged(to: powerSaver, now: clock.now))
        outboxInput.yield(.managerProperties(ManagerProperty.values([.powerSaver: .boolean(powerSaver)])))
        await published()
    }

    /// logind's `PrepareForSleep`: with true every attempt stops (its tasks wait `sleep`) and the delay inhibitor is
    /// let go once none is in flight; with false the tasks compete again and the inhibitor is taken again.
    func prepareForSleep(_ sleeping: Bool) async {
        perform(queue.prepareForSleep(sleeping, now: clock.now))
        await published()
    }

    /// Uses `inhibitor` for sleep: the delay inhibitor is held while any attempt is in flight, the block one (with
    /// `InhibitSleep`) while a foreground task transfers.
    func useSleepInhibitor(_ inhibitor: SleepInhibitor) {
        sleepInhibitor = inhibitor
        followInhibitors()
    }

    /// Holds or lets go of the inhibitors as the attempts in flight say.
    func followInhibitors() {
        guard let sleepInhibitor else { return }
        let delay = queue.scheduler.attemptsInFlight > 0
        if delay != heldInhibitors.delay {
            heldInhibitors.delay = delay
            sleepInhibitor.holdDelay(delay)
        }
        let block = settings.inhibitSleep && !queue.scheduler.isPreparingForSleep
            && queue.scheduler.isForegroundTransferring
        if block != heldInhibitors.block {
            heldInhibitors.block = block
            sleepInhibitor.holdBlock(block)
        }
    }

    /// The Manager's `InhibitSleep`.
    func setInhibitSleep(_ value: DBusValue) async throws(DBusError) {
        guard case .boolean(let inhibit) = value else {
            throw .invalidArgs("\(ManagerProperty.inhibitSleep.name) must be a b")
        }
        try await changeSettings([.inhibitSleep: .boolean(inhibit)]) { $0.inhibitSleep = inhibit }
        followInhibitors()
        await published()
    }
}
