package import DBusKit

/// The Swift description of the contract's interfaces, built from their members: what hauld exports and
/// introspects. `dbus/org.haul.Haul1.xml` documents the same members, and `ContractTests` holds the two together.
package enum HaulInterfaces {
    package static let manager = DBusInterfaceDescription(
        name: HaulBus.managerInterface,
        methods: ManagerMethod.allCases.map(\.declaration),
        signals: ManagerSignal.allCases.map(\.declaration),
        properties: ManagerProperty.allCases.map(\.declaration)
    )

    package static let activityIndicator = DBusInterfaceDescription(
        name: HaulBus.indicatorInterface,
        methods: IndicatorMethod.allCases.map(\.declaration),
        signals: IndicatorSignal.allCases.map(\.declaration),
        properties: IndicatorProperty.allCases.map(\.declaration)
    )

    package static let task = DBusInterfaceDescription(
        name: HaulBus.taskInterface,
        methods: TaskMethod.allCases.map(\.declaration),
        properties: TaskProperty.allCases.map(\.declaration)
    )

    package static let all = [manager, activityIndicator, task]
}
