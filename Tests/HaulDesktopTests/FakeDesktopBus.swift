import DBusKit
import HaulDesktop
import Synchronization

/// The desktop bridge's bus, in-process: it records what the bridge does, in order, answers its calls as a test says,
/// and delivers the messages a test sends. Every output is also handed out in order through ``outputs``, so that a
/// test waits for the next one instead of polling.
final class FakeDesktopBus: DesktopBus {
    enum Output: Equatable, Sendable, CustomStringConvertible {
        /// A call that wants no answer: its destination, path, interface, member and body.
        case sent(destination: String, path: ObjectPath, member: String, body: [DBusValue])
        /// A call waiting for its answer.
        case called(destination: String, member: String, body: [DBusValue])
        case exported(path: ObjectPath, properties: [String: DBusValue])
        case updated(path: ObjectPath, changes: [String: DBusValue])
        case signal(path: ObjectPath, member: String, body: [DBusValue])
        case flushed
        case closed

        var description: String {
            switch self {
            case .sent(_, let path, let member, _): "sent \(member) to \(path)"
            case .called(let destination, let member, _): "called \(member) of \(destination)"
            case .exported(let path, _): "exported \(path)"
            case .updated(let path, let changes): "updated \(changes.keys.sorted()) of \(path)"
            case .signal(_, let member, _): "signal \(member)"
            case .flushed: "flushed"
            case .closed: "closed"
            }
        }
    }

    private struct State {
        var owners: [String: String] = [:]
        var recorded: [Output] = []
        /// Calls waiting for an answer, by member, oldest first.
        var calls: [String: [CheckedContinuation<[DBusValue], any Error>]] = [:]
        var messages: AsyncStream<DBusMessage>.Continuation?
        var rules: [MatchRule] = []
    }

    private let state = Mutex(State())
    let outputs: AsyncStream<Output>
    private let outputInput: AsyncStream<Output>.Continuation

    let uniqueName = ":1.99"

    init(owners: [String: String] = [:]) {
        (outputs, outputInput) = AsyncStream.makeStream(of: Output.self)
        state.withLock { $0.owners = owners }
    }

    /// Everything recorded so far.
    var recorded: [Output] { state.withLock { $0.recorded } }

    /// The rules of the bridge's subscriptions.
    var rules: [MatchRule] { state.withLock { $0.rules } }

    /// Answers the oldest waiting call of `member`.
    func answer(_ member: String, with reply: Result<[DBusValue], any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<[DBusValue], any Error>? in
            guard var calls = state.calls[member], !calls.isEmpty else { return nil }
            let first = calls.removeFirst()
            state.calls[member] = calls
            return first
        }
        waiting?.resume(with: reply)
    }

    /// Delivers a message to the bridge's subscription.
    func deliver(_ message: DBusMessage) {
        _ = state.withLock { $0.messages }?.yield(message)
    }

    private func record(_ output: Output) {
        state.withLock { $0.recorded.append(output) }
        outputInput.yield(output)
    }

    // MARK: DesktopBus

    func messages(matching rules: [MatchRule]) async throws -> AsyncStream<DBusMessage> {
        let (stream, input) = AsyncStream.makeStream(of: DBusMessage.self)
        state.withLock {
            $0.messages = input
            $0.rules += rules
        }
        return stream
    }

    func owner(of name: String) async -> String? { state.withLock { $0.owners[name] } }

    func send(_ message: DBusMessage) throws {
        record(
            .sent(
                destination: message.destination ?? "", path: message.path ?? .root, member: message.member ?? "",
                body: message.body
            )
        )
    }

    func call(_ message: DBusMessage, timeout: Duration) async throws -> [DBusValue] {
        let member = message.member ?? ""
        return try await withCheckedThrowingContinuation { continuation in
            state.withLock { $0.calls[member, default: []].append(continuation) }
            record(.called(destination: message.destination ?? "", member: member, body: message.body))
        }
    }

    func export(_ interface: DBusExportedInterface, at path: ObjectPath) async throws {
        record(.exported(path: path, properties: interface.properties))
    }

    func updateProperties(_ changes: [String: DBusValue], interface: String, at path: ObjectPath) async throws {
        record(.updated(path: path, changes: changes))
    }

    func emitSignal(path: ObjectPath, interface: String, member: String, _ body: [DBusValue]) async throws {
        record(.signal(path: path, member: member, body: body))
    }

    func serve() async {}

    func flush() async { record(.flushed) }

    func close() async {
        state.withLock { $0.messages }?.finish()
        record(.closed)
    }
}
