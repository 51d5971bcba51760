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

extension TaskStateName {
    /// The bus's `State` of a task in the queue: `queued` while a running task waits.
    init(_ shown: TransferQueue<ContinuousClock.Instant>.PublicState) {
        self = shown.isQueued ? .queued : TaskStateName(shown.state)
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

extension WaitingForName {
    package init(_ reason: WaitingFor) {
        self =
            switch reason {
            case .sleep: .sleep
            case .network: .network
            case .unmetered: .unmetered
            case .power: .power
            case .retry: .retry
            case .slot: .slot
            }
    }

    /// `WaitingFor`'s value: the reason's name, or `""` when nothing is waited for.
    package static func value(_ reason: WaitingFor?) -> String {
        reason.map { WaitingForName($0).rawValue } ?? ""
    }
}

extension NetworkStateName {
    package init(_ state: NetworkState) {
        self =
            switch state {
            case .online: .online
            case .limited: .limited
            case .portal: .portal
            case .offline: .offline
            case .unknown: .unknown
            }
    }
}
