package import DBusKit

/// The Manager's settings as a client of the contract sees them: the properties of `org.haul.Haul1.Manager`, kept up
/// to date from `GetAll` and `PropertiesChanged`. Until a value arrives, each has hauld's default.
package struct ManagerSnapshot: Sendable, Equatable {
    package var defaultConnections: UInt32 = 1
    /// Bytes per second, 0 for none.
    package var downloadRateLimit: UInt64 = 0
    /// Bytes per second, 0 for none.
    package var uploadRateLimit: UInt64 = 0
    /// How many tasks transfer at once, 0 for no limit.
    package var maxRunningTasks: UInt32 = 5
    /// `unknown` until hauld says, as without NetworkManager.
    package var networkState = NetworkStateName.unknown
    package var metered = false
    package var powerSaver = false
    package var inhibitSleep = false

    package init(properties: [String: DBusValue] = [:]) {
        apply(properties)
    }

    /// Merges the values of a `GetAll` reply or of a `PropertiesChanged`'s changes; a value of another type is ignored.
    package mutating func apply(_ properties: [String: DBusValue]) {
        if let value = ManagerProperty.defaultConnections.value(in: properties)?.uint32Value { defaultConnections = value }
        if let value = ManagerProperty.downloadRateLimit.value(in: properties)?.uint64Value { downloadRateLimit = value }
        if let value = ManagerProperty.uploadRateLimit.value(in: properties)?.uint64Value { uploadRateLimit = value }
        if let value = ManagerProperty.maxRunningTasks.value(in: properties)?.uint32Value { maxRunningTasks = value }
        if let value = ManagerProperty.networkState.value(in: properties)?.stringValue.flatMap(NetworkStateName.init) {
            networkState = value
        }
        if let value = ManagerProperty.metered.value(in: properties)?.boolValue { metered = value }
        if let value = ManagerProperty.powerSaver.value(in: properties)?.boolValue { powerSaver = value }
        if let value = ManagerProperty.inhibitSleep.value(in: properties)?.boolValue { inhibitSleep = value }
    }
}
