import HaulContract
import HaulCore
import Testing
@testable import HaulService

/// The core's values onto the bus's names: every value has a name of its own, in the contract's order (for
/// `WaitingFor`, the order of precedence the XML documents).
@Suite(.timeLimit(.minutes(3))) struct ContractMappingTests {
    @Test func everyCoreValueHasItsOwnName() {
        #expect(TransferTaskState.allCases.map(TaskStateName.init) == [.running, .suspended, .canceling, .completed])
        #expect(TransferKind.allCases.map(TaskKindName.init) == TaskKindName.allCases)
        #expect(ActivityIndicatorState.allCases.map(IndicatorStateName.init) == IndicatorStateName.allCases)
        #expect(TransferPriority.allCases.map(TaskPriorityName.init) == TaskPriorityName.allCases)
        #expect(NetworkState.allCases.map(NetworkStateName.init) == NetworkStateName.allCases)
        #expect(WaitingFor.allCases.sorted().map(WaitingForName.init) == WaitingForName.allCases)
        #expect(WaitingForName.value(nil) == "")
    }
}
