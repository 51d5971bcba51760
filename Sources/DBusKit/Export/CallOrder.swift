/// The order in which the object server handles what arrives: method calls and the departures of peers.
///
/// Everything is handled in arrival order, except behind an interleaved call (a long method that lets other clients'
/// calls in while it waits): until it has answered, its client's later calls and its departure are held, and then
/// handled in their order. A client that sends `SuspendAll` and, without waiting for its answer, `Resume` has the
/// `Resume` applied after the `SuspendAll`, as it would be by a server that answers one call at a time.
package struct CallOrder: Sendable {
    /// How a method runs beside the others.
    package enum Mode: Sendable, Equatable {
        /// Handled alone: the next input waits until it has answered.
        case serial
        /// Started and left to finish while the next inputs are handled.
        case concurrent
        /// Started and left to finish; the same client's later inputs wait until it has answered.
        case interleaved
    }

    package enum Input: Sendable {
        /// A method call, or a `NameOwnerChanged` that may say a peer left.
        case message(DBusMessage)
        /// The interleaved call of `sender` has answered.
        case answered(sender: String)
    }

    package enum Step: Sendable {
        case handle(DBusMessage, Mode)
        case departed(String)
    }

    /// The clients with an interleaved call not yet answered, and what of theirs waits behind it.
    private var held: [String: [Step]] = [:]

    package init() {}

    /// What to handle now, in order, given `input`. `mode` says how a call's method runs.
    package mutating func admit(_ input: Input, mode: (DBusMessage) -> Mode) -> [Step] {
        switch input {
        case .message(let message) where message.kind == .methodCall:
            let sender = message.sender ?? ""
            let step = Step.handle(message, mode(message))
            if held[sender] != nil {
                held[sender]?.append(step)
                return []
            }
            if case .handle(_, .interleaved) = step { held[sender] = [] }
            return [step]
        case .message(let message):
            guard let name = PeerDeparture.uniqueName(from: message) else { return [] }
            if held[name] != nil {
                held[name]?.append(.departed(name))
                return []
            }
            return [.departed(name)]
        case .answered(let sender):
            guard let waiting = held.removeValue(forKey: sender) else { return [] }
            // Up to the next interleaved call, which holds the rest in turn.
            guard let next = waiting.firstIndex(where: { if case .handle(_, .interleaved) = $0 { true } else { false } })
            else { return waiting }
            held[sender] = Array(waiting[(next + 1)...])
            return Array(waiting[...next])
        }
    }
}
