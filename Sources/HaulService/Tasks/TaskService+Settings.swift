import DBusKit
import FoundationEssentials
import HaulContract
import HaulCore
import HaulTransfer

/// The read-write properties that are settings: the Manager's (saved in `manager.json`) and a task's own rate limit.
extension TaskService {
    /// The Manager's `DefaultConnections`: 1 to 16.
    func setDefaultConnections(_ value: DBusValue) async throws(DBusError) {
        guard case .uint32(let connections) = value, DownloadOption.connectionRange.contains(connections) else {
            throw .invalidArgs("\(ManagerProperty.defaultConnections.name) must be a u \(Self.connectionRangeText)")
        }
        try await changeSettings([.defaultConnections: .uint32(connections)]) { $0.defaultConnections = connections }
        await published()
    }

    /// The Manager's `DownloadRateLimit` or `UploadRateLimit`: for running transfers within a second.
    func setGlobalRateLimit(_ direction: RateGate.Direction, _ value: DBusValue) async throws(DBusError) {
        let property: ManagerProperty = direction == .download ? .downloadRateLimit : .uploadRateLimit
        let limit = try Self.rateLimit(property.name, value)
        try await changeSettings([property: .uint64(limit)]) { settings in
            switch direction {
            case .download: settings.downloadRateLimit = limit
            case .upload: settings.uploadRateLimit = limit
            }
        }
        rates.setGlobalLimit(limit, for: direction)
        await published()
    }

    /// A task's `RateLimit`: for its running transfer within a second, and saved with the task.
    func setRateLimit(_ value: DBusValue, of id: UInt32) async throws(DBusError) {
        let limit = try Self.rateLimit(TaskProperty.rateLimit.name, value)
        try checkNotCompleted(id)
        guard let task = tasks[id] else { throw HaulErrorName.notFound.error("no task \(id)") }
        tasks[id]?.record.rateLimit = limit
        if task.attempt != nil { rates.setLimit(limit, of: id, direction: task.record.kind.rateDirection) }
        persist(id)
        publish(id, TaskProperty.values([.rateLimit: .uint64(limit)]))
        await published()
    }

    /// Saves `change` of the settings on the record writer's thread, then applies it and queues the changed
    /// properties; a settings file that cannot be written changes nothing. Property writes reach it one at a time
    /// (the object server dispatches them in order).
    func changeSettings(
        _ properties: [ManagerProperty: DBusValue], _ change: (inout ManagerSettings) -> Void
    ) async throws(DBusError) {
        var changed = settings
        change(&changed)
        do {
            try await changed.save(to: settingsURL, with: records)
        } catch {
            throw .failed("cannot save the settings in \(settingsURL.path(percentEncoded: false)): \(error)")
        }
        change(&settings)
        outboxInput.yield(.managerProperties(ManagerProperty.values(properties)))
    }

    private static func rateLimit(_ name: String, _ value: DBusValue) throws(DBusError) -> UInt64 {
        guard case .uint64(let limit) = value, RateLimitRule.isValid(limit) else {
            throw .invalidArgs("\(name) must be a t, \(RateLimitRule.requirement)")
        }
        return limit
    }
}
