package import HaulContract
package import HaulCore

// The core's states and kinds as the bus spells them. The core's own enums are also what task records on disk hold:
// mapped here one by one, a name on the bus and a saved value can each change without the other.

extension TaskStateName {
    package init(_ state: TransferTaskState) {
        self =
            switch state {
            case .running: .running
            case .suspended: .suspended
            case .canceling: .canceling
            case .completed: .completed
            }
    }
}

extension TaskKindName {
    package init(_ kind: TransferKind) {
        self =
            switch kind {
            case .download: .download
            case .upload: .upload
            }
    }
}

extension IndicatorStateName {
    package init(_ state: ActivityIndicatorState) {
        self =
            switch state {
            case .notActive: .notActive
            case .delayingStart: .delayingStart
            case .active: .active
            case .delayingEnd: .delayingEnd
            }
    }
}
