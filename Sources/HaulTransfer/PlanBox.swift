package import HaulCore
import Synchronization

/// The newest segment plan of a running download, left by its connections for the task service: the progress tick
/// saves it when it changed, every few seconds at most however many segments cross a checkpoint, and the attempt's
/// end takes the last one.
package final class PlanBox: Sendable {
    private let state = Mutex<(plan: SegmentPlan?, isNew: Bool)>((nil, false))

    package init() {}

    package func post(_ plan: SegmentPlan) {
        state.withLock { $0 = (plan, true) }
    }

    /// The plan posted since the last call, if any.
    package func takeNew() -> SegmentPlan? {
        state.withLock { state in
            defer { state.isNew = false }
            return state.isNew ? state.plan : nil
        }
    }
}
