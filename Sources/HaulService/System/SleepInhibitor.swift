package import DBusKit
import Synchronization

/// logind's sleep inhibitors and its `PrepareForSleep` signal, on the system bus (`org.freedesktop.login1`,
/// `/org/freedesktop/login1`, interface `org.freedesktop.login1.Manager`).
///
/// The owner says which inhibitors it wants (`holdDelay`, `holdBlock`); this takes them from `Inhibit` and keeps the
/// file descriptor each one is, and releases one by closing its descriptor at once, in the call that lets it go. It
/// takes a wanted inhibitor again when logind comes back after leaving the bus (the old descriptors then mean
/// nothing and are closed). An `Inhibit` that fails is asked again when logind comes back, or when the owner lets
/// the inhibitor go and wants it anew.
///
/// ```swift
/// let sleep = SleepInhibitor(connection: systemBus)
/// async let following: Void = sleep.run()
/// sleep.holdDelay(true)                          // transfers run
/// for await starting in sleep.prepareForSleep {  // true: going to sleep; false: woken
///     if starting { /* stop transfers */ sleep.holdDelay(false) }
/// }
/// ```
package final class SleepInhibitor: Sendable {
    /// The two inhibitors hauld takes.
    package enum Kind: Sendable, CaseIterable {
        /// `sleep`, mode `delay`: sleep waits (at most logind's `InhibitDelayMaxSec`) until it is closed.
        case delay
        /// `sleep:idle`, mode `block`: neither sleep nor idle actions happen while it is held.
        case block

        var what: String { self == .delay ? "sleep" : "sleep:idle" }
        var mode: String { self == .delay ? "delay" : "block" }
    }

    /// Whether the machine is going to sleep: first logind's `PreparingForSleep` when `run()` has started following
    /// (false without logind), then each `PrepareForSleep`: true before the machine sleeps, false once it has woken.
    /// When logind leaves the bus after a true, false follows (nobody will say it any more); when it comes back, its
    /// `PreparingForSleep` if that differs. Ends when `run()` returns, with false if the last was true.
    package let prepareForSleep: AsyncStream<Bool>
    private let sleepContinuation: AsyncStream<Bool>.Continuation
    private let inputs: AsyncStream<Input>
    private let inputContinuation: AsyncStream<Input>.Continuation
    private let state = Mutex(State())
    private let connection: DBusConnection
    private let who: String
    private let why: String
    /// How long an `Inhibit` call may take.
    private let timeout: Duration

    private enum Input {
        case message(DBusMessage)
        /// An inhibitor is wanted and not held: see whether it can be asked for.
        case wanted
        case ended
    }

    private struct State {
        var wanted: Set<Kind> = []
        /// Counts the times each inhibitor became wanted: a call that failed is made again when it was let go and
        /// wanted anew while the call was on its way.
        var wishes: [Kind: Int] = [:]
        var held: [Kind: DBusFileDescriptor] = [:]
        var asking: Set<Kind> = []
        /// Whether logind is on the bus; nil until `run()` has looked.
        var loginPresent: Bool?
        /// Counts logind's departures: an answer to a call made before the last one is from a logind that is gone.
        var generation = 0
    }

    /// `who` and `why` are what `systemd-inhibit --list` shows.
    package init(
        connection: DBusConnection, who: String = "Haul", why: String = "Transfers are running",
        timeout: Duration = .seconds(10)
    ) {
        self.connection = connection
        self.who = who
        self.why = why
        self.timeout = timeout
        (prepareForSleep, sleepContinuation) = AsyncStream.makeStream(of: Bool.self)
        (inputs, inputContinuation) = AsyncStream.makeStream(of: Input.self)
    }

    /// Takes (in the background) or releases (closing its descriptor before returning) the `delay` inhibitor for
    /// `sleep`.
    package func holdDelay(_ hold: Bool) { self.hold(.delay, hold) }

    /// Takes (in the background) or releases (closing its descriptor before returning) the `block` inhibitor for
    /// `sleep:idle`.
    package func holdBlock(_ hold: Bool) { self.hold(.block, hold) }

    /// Whether logind has handed out the inhibitor and it is held.
    package func isHolding(_ kind: Kind) -> Bool {
        state.withLock { $0.held[kind] != nil }
    }

    private func hold(_ kind: Kind, _ hold: Bool) {
        let released: DBusFileDescriptor? = state.withLock { state in
            if hold {
                if state.wanted.insert(kind).inserted { state.wishes[kind, default: 0] += 1 }
                return nil
            }
            state.wanted.remove(kind)
            return state.held.removeValue(forKey: kind)
        }
        if hold {
            inputContinuation.yield(.wanted)
        } else {
            // The last reference: its deinit closes the descriptor here, and logind lets the inhibitor go.
            withExtendedLifetime(released) {}
        }
    }

    /// Follows logind until the task is cancelled or the connection closes, taking the inhibitors that are wanted.
    /// Call it once; every inhibitor is released when it returns.
    package func run() async {
        defer {
            loginChanged(present: false)
            sleepContinuation.finish()
        }
        await withTaskGroup(of: Void.self) { group in
            let sleepRule = MatchRule(
                kind: .signal, sender: Self.name, path: Self.path, interface: Self.interface, member: "PrepareForSleep"
            )
            guard let messages = try? await connection.messages(matching: [NameOwner.rule(for: Self.name), sleepRule]),
                let presence = try? await NameOwner.presence(of: Self.name, on: connection)
            else { return }
            let inputs = inputContinuation
            group.addTask {
                for await message in messages { inputs.yield(.message(message)) }
                inputs.yield(.ended)
            }
            var ownerSerial = presence.serial
            loginChanged(present: presence.owned)
            var sleep = presence.owned ? await preparingForSleep(of: Self.name) : Sleep()
            sleepContinuation.yield(sleep.starting)
            askForWanted(in: &group)
            following: for await input in self.inputs {
                switch input {
                case .ended:
                    break following
                case .wanted:
                    askForWanted(in: &group)
                case .message(let message):
                    if let owner = NameOwner.change(of: Self.name, in: message) {
                        guard NameOwner.isAfter(message.serial, ownerSerial) else { continue }
                        ownerSerial = message.serial
                        loginChanged(present: !owner.isEmpty)
                        // Gone: nobody will say that the machine woke. Back: it says whether it is going to sleep.
                        let now = owner.isEmpty ? Sleep() : await preparingForSleep(of: owner)
                        if now.starting != sleep.starting { sleepContinuation.yield(now.starting) }
                        sleep = now
                        askForWanted(in: &group)
                    } else if let starting = Self.prepareForSleep(message), !sleep.isAnswered(before: message) {
                        sleep.starting = starting
                        sleepContinuation.yield(starting)
                    }
                }
            }
            if sleep.starting { sleepContinuation.yield(false) }
            group.cancelAll()
        }
    }

    /// Whether logind is preparing for sleep, and the answer to `Get(PreparingForSleep)` that said so last.
    private struct Sleep {
        var starting = false
        var answer: (sender: String?, serial: UInt32)?

        /// Whether the answer already told what `message` says: logind sent it before the answer.
        func isAnswered(before message: DBusMessage) -> Bool {
            guard let answer, answer.sender == message.sender else { return false }
            return !NameOwner.isAfter(message.serial, answer.serial)
        }
    }

    /// logind's `PreparingForSleep`: not preparing when the call fails or answers anything but a boolean.
    private func preparingForSleep(of destination: String) async -> Sleep {
        let call = DBusMessage.methodCall(
            destination: destination, path: Self.path, interface: PropertyFollower.propertiesInterface, member: "Get",
            body: [.string(Self.interface), .string("PreparingForSleep")]
        )
        guard let reply = try? await connection.call(call, timeout: timeout) else { return Sleep() }
        return Sleep(starting: reply.body.first?.unwrapped.boolValue ?? false, answer: (reply.sender, reply.serial))
    }

    /// Notes logind's presence; when it has left, the inhibitors it handed out are closed (they hold nothing any more)
    /// and answers still on their way are from a logind that is gone.
    private func loginChanged(present: Bool) {
        let dropped = state.withLock { state in
            let dropped = present ? [:] : state.held
            if !present {
                state.held = [:]
                state.generation += 1
            }
            state.loginPresent = present
            return dropped
        }
        withExtendedLifetime(dropped) {}
    }

    /// Asks logind for every wanted inhibitor that is neither held nor being asked for.
    private func askForWanted(in group: inout TaskGroup<Void>) {
        let calls = state.withLock { state in
            guard state.loginPresent == true else { return [(Kind, generation: Int, wish: Int)]() }
            let kinds = Kind.allCases.filter {
                state.wanted.contains($0) && state.held[$0] == nil && !state.asking.contains($0)
            }
            state.asking.formUnion(kinds)
            return kinds.map { ($0, state.generation, state.wishes[$0, default: 0]) }
        }
        for (kind, generation, wish) in calls {
            group.addTask { await self.ask(for: kind, generation: generation, wish: wish) }
        }
    }

    private func ask(for kind: Kind, generation: Int, wish: Int) async {
        let reply = try? await connection.call(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "Inhibit",
            [.string(kind.what), .string(who), .string(why), .string(kind.mode)], timeout: timeout
        )
        var descriptor: DBusFileDescriptor?
        if let reply, reply.count == 1, case .unixFD(let fd) = reply[0], fd.rawValue >= 0 {
            descriptor = fd
        }
        let (unused, askAgain) = state.withLock { state in
            state.asking.remove(kind)
            let current = state.generation == generation
            guard current, state.wanted.contains(kind), state.held[kind] == nil, let fd = descriptor else {
                // Asked again if still wanted and either logind has changed since (the one there now is asked) or
                // the owner has wanted the inhibitor anew meanwhile.
                let again = !current || state.wishes[kind, default: 0] != wish
                return (descriptor, again && state.wanted.contains(kind) && state.held[kind] == nil)
            }
            state.held[kind] = fd
            return (nil, false)
        }
        // Not wanted any more, or from a logind that is gone: closed here.
        withExtendedLifetime(unused) {}
        if askAgain { inputContinuation.yield(.wanted) }
    }

    /// The argument of a well-formed `PrepareForSleep(b)`.
    private static func prepareForSleep(_ message: DBusMessage) -> Bool? {
        guard message.kind == .signal, message.interface == interface, message.member == "PrepareForSleep",
            message.body.count == 1
        else { return nil }
        return message.body[0].boolValue
    }

    static let name = "org.freedesktop.login1"
    static let path: ObjectPath = "/org/freedesktop/login1"
    static let interface = "org.freedesktop.login1.Manager"
}
