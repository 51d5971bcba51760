package import HaulContract
package import HaulCore

// The core's states and kinds as the bus spells them, mapped one by one (never through raw values): a name on the bus,
// the core's own enums and the names in saved files (`TaskRecordNames`) can each change without the others.

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

extension TaskPriorityName {
    package init(_ priority: TransferPriority) {
        self =
            switch priority {
            case .foreground: .foreground
            case .background: .background
            }
    }
}

extension TransferPriority {
    package init(_ name: TaskPriorityName) {
        self =
            switch name {
            case .foreground: .foreground
            case .background: .background
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
