package import DBusKit
package import HaulContract

extension DBusValue {
    /// A task's `State` as the bus carries it.
    package static func state(_ state: TaskStateName) -> DBusValue { .string(state.rawValue) }

    /// The indicator's `State` as the bus carries it.
    package static func state(_ state: IndicatorStateName) -> DBusValue { .string(state.rawValue) }
}
