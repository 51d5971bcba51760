import CGlibcExtras
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One connection's thread: an epoll loop that runs the connection actor's jobs, the blocks queued with
/// ``async(_:)``, libdbus's watches and its timeouts, one after another.
///
/// libdbus calls back (watches, timeouts, filters, pending-call notifications) on whatever thread runs it; by running
/// every libdbus call here, those callbacks are on the actor's executor too, and `assumeIsolated` can prove it at run
/// time through `checkIsolated()`.
///
/// It replaces a `DispatchQueue` with `DispatchSource`s, which cost about three wake-ups for each message read (the
/// manager thread's epoll, a worker for the handler, the manager again to re-arm the source) and one for each job. Here
/// a message read costs one, and jobs queued while the thread is awake cost none.
final class BusLoop: SerialExecutor {
    /// What a watch waits for.
    enum Readiness {
        case readable
        case writable

        var events: UInt32 { self == .readable ? EPOLLIN.rawValue : EPOLLOUT.rawValue }
    }

    /// What waits for the thread.
    private enum Item {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
    }

    /// What other threads share with the loop's.
    private struct Queue {
        var items: [Item] = []
        /// Whether the thread is running rather than waiting in `epoll_wait`: a wake-up is written only to a sleeper.
        var isAwake = true
        var isStopping = false
        /// The thread is gone and its descriptors are closed: nothing queued would run.
        var isGone = false
    }

    /// A file descriptor the loop owns and closes once the watch is removed. It is in epoll's set only while enabled:
    /// epoll reports a hang-up even for a descriptor watched for nothing, and a disabled watch would spin the loop.
    private struct Watch {
        let fd: Int32
        let events: UInt32
        let handler: @Sendable () -> Void
        var isEnabled = false
    }

    /// A repeating timer, armed while `deadline` is set.
    private struct Timer {
        var interval: Duration = .zero
        var deadline: ContinuousClock.Instant?
        let handler: @Sendable () -> Void
    }

    private struct Registry {
        var watches: [UInt64: Watch] = [:]
        var timers: [UInt64: Timer] = [:]
        /// 0 stands for the wake-up descriptor in epoll's data.
        var nextID: UInt64 = 1

        mutating func takeID() -> UInt64 {
            defer { nextID += 1 }
            return nextID
        }
    }

    private let queue = Mutex(Queue())
    private let registry = Mutex(Registry())
    private let epoll: Int32
    private let wakeFD: Int32
    /// The loop's thread, for `checkIsolated()`.
    private let thread = Atomic<UInt>(0)

    /// Starts the thread, named `name` (at most 15 bytes). Nil when the kernel gives no descriptor or thread.
    init?(name: String) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        // A failed initializer still runs `deinit`, which closes `wakeFD`.
        guard epoll >= 0, wakeFD >= 0 else {
            if epoll >= 0 { close(epoll) }
            return nil
        }
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 0))
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event) == 0, start(name: name) else {
            close(epoll)
            return nil
        }
    }

    /// The wake-up descriptor lives as long as the loop, not its thread: a push writes it outside the queue's lock,
    /// and may do so just after the thread ended.
    deinit {
        if wakeFD >= 0 { close(wakeFD) }
    }

    private func start(name: String) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // The thread keeps the loop until it ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        guard pthread_create(&handle, &attributes, { context in
            context.map { Unmanaged<BusLoop>.fromOpaque($0).takeRetainedValue().run() }
            return nil
        }, context) == 0 else {
            Unmanaged<BusLoop>.fromOpaque(context).release()
            return false
        }
        pthread_setname_np(handle, name)
        return true
    }

    // MARK: Queueing

    func enqueue(_ job: consuming ExecutorJob) {
        push(.job(UnownedJob(job)))
    }

    /// Runs `block` on the loop's thread after everything queued before it.
    func async(_ block: @escaping @Sendable () -> Void) {
        push(.block(block))
    }

    /// Ends the thread once everything queued so far has run; what is queued after is dropped.
    func stop() {
        let wake = queue.withLock { queue in
            queue.isStopping = true
            return takeWakeUp(&queue)
        }
        if wake { writeWakeUp() }
    }

    private func push(_ item: Item) {
        let wake = queue.withLock { queue in
            guard !queue.isGone else { return false }
            queue.items.append(item)
            return takeWakeUp(&queue)
        }
        if wake { writeWakeUp() }
    }

    /// Whether the caller is the one to wake the sleeping thread (under the queue's lock).
    private func takeWakeUp(_ queue: inout Queue) -> Bool {
        guard !queue.isAwake, !queue.isGone else { return false }
        queue.isAwake = true
        return true
    }

    /// Written outside the queue's lock: the woken thread takes that lock first, and found it still held by the
    /// writer, so that each wake-up cost the thread a second one, on the lock's futex.
    private func writeWakeUp() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(thread.load(ordering: .relaxed) == pthread_self(), "not on the connection's thread")
    }

    // MARK: Watches and timers

    /// Watches `fd`, which the loop owns from now on and closes once the watch is removed (or the loop ends), for
    /// `readiness`; `handler` runs on the loop's thread while the watch is enabled and `fd` is ready. Disabled until
    /// ``setWatch(_:enabled:)``.
    func addWatch(fd: Int32, for readiness: Readiness, handler: @escaping @Sendable () -> Void) -> UInt64 {
        registry.withLock { registry in
            let id = registry.takeID()
            registry.watches[id] = Watch(fd: fd, events: readiness.events, handler: handler)
            return id
        }
    }

    /// False when epoll refused to watch the descriptor.
    @discardableResult
    func setWatch(_ id: UInt64, enabled: Bool) -> Bool {
        registry.withLock { registry in
            guard let watch = registry.watches[id] else { return false }
            guard watch.isEnabled != enabled else { return true }
            var event = epoll_event(events: watch.events, data: epoll_data_t(u64: id))
            let done = epoll_ctl(epoll, enabled ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, watch.fd, &event) == 0
            if done { registry.watches[id]?.isEnabled = enabled }
            return done
        }
    }

    /// Stops watching, and closes the watch's descriptor at once: epoll forgets it before its number can be reused.
    func removeWatch(_ id: UInt64) {
        registry.withLock { registry in
            guard let watch = registry.watches.removeValue(forKey: id) else { return }
            if watch.isEnabled { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, watch.fd, nil) }
            close(watch.fd)
        }
    }

    /// A timer that runs `handler` on the loop's thread, disarmed until ``setTimer(_:every:)``.
    func addTimer(handler: @escaping @Sendable () -> Void) -> UInt64 {
        registry.withLock { registry in
            let id = registry.takeID()
            registry.timers[id] = Timer(handler: handler)
            return id
        }
    }

    /// Arms a disarmed timer to fire every `interval` from now on, or disarms it (nil); an armed one keeps its
    /// schedule. The loop's thread only: it sleeps until the nearest deadline it computed before.
    func setTimer(_ id: UInt64, every interval: Duration?) {
        registry.withLock { registry in
            guard var timer = registry.timers[id] else { return }
            if let interval {
                guard timer.deadline == nil else { return }
                timer.interval = interval
                timer.deadline = .now + interval
            } else {
                timer.deadline = nil
            }
            registry.timers[id] = timer
        }
    }

    func removeTimer(_ id: UInt64) {
        _ = registry.withLock { $0.timers.removeValue(forKey: id) }
    }

    // MARK: The thread

    private func run() {
        thread.store(pthread_self(), ordering: .relaxed)
        var events = [epoll_event](repeating: epoll_event(), count: Self.eventsPerWait)
        while true {
            let (items, isStopping) = queue.withLock { queue in
                let items = queue.items
                queue.items = []
                if items.isEmpty { queue.isAwake = false }
                return (items, queue.isStopping)
            }
            for item in items {
                switch item {
                case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
                case .block(let block): block()
                }
            }
            if items.isEmpty, isStopping { break }
            // With jobs run, only look at the descriptors: more jobs may be waiting.
            let count = epoll_wait(epoll, &events, Int32(events.count), items.isEmpty ? waitMilliseconds() : 0)
            queue.withLock { $0.isAwake = true }
            for event in events.prefix(max(Int(count), 0)) { handle(event) }
            fireTimers()
        }
        finish()
    }

    /// How long epoll may wait: until the nearest timer, or for ever.
    private func waitMilliseconds() -> Int32 {
        let nearest = registry.withLock { $0.timers.values.compactMap(\.deadline).min() }
        guard let nearest else { return -1 }
        let left = ContinuousClock.now.duration(to: nearest)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        // Rounded up, so that the timer is due when epoll returns.
        return Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1, Int64(Int32.max)))
    }

    private func handle(_ event: epoll_event) {
        let id = event.data.u64
        if id == 0 {
            var value: UInt64 = 0
            _ = read(wakeFD, &value, MemoryLayout<UInt64>.size)
            return
        }
        // A handler may remove or change watches: it runs outside the lock.
        registry.withLock { $0.watches[id]?.handler }?()
    }

    private func fireTimers() {
        let now = ContinuousClock.now
        let due = registry.withLock { registry in
            var due: [@Sendable () -> Void] = []
            for (id, timer) in registry.timers {
                guard let deadline = timer.deadline, deadline <= now else { continue }
                registry.timers[id]?.deadline = now + timer.interval
                due.append(timer.handler)
            }
            return due
        }
        for handler in due { handler() }
    }

    private func finish() {
        queue.withLock { queue in
            queue.isGone = true
            queue.items = []
        }
        registry.withLock { registry in
            for watch in registry.watches.values { close(watch.fd) }
            registry = Registry()
        }
        close(epoll)
    }

    private static let eventsPerWait = 16
}
