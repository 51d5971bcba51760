import Synchronization

/// Carries an attempt's response head from the HTTP client's event loop to the task service, and lets the attempt
/// wait until it arrived: the service must see the head (status, validator, size) before the attempt's end, or a late
/// head would overwrite what the end recorded.
final class HeadDelivery: Sendable {
    private let delivery = Mutex<Task<Void, Never>?>(nil)

    /// Starts delivering; an attempt receives at most one head (redirects are followed before it, by the client).
    func send(_ deliver: @escaping @Sendable () async -> Void) {
        delivery.withLock { $0 = Task(operation: deliver) }
    }

    /// Returns once the head sent, if any, was delivered.
    func delivered() async {
        await delivery.withLock { $0 }?.value
    }
}
