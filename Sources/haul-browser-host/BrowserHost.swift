import Glibc
import Synchronization

/// The native-messaging host `org.haul.haul`: a browser starts it for a message of the Haul extension, writes the
/// message to its standard input and reads the answer from its standard output (see docs/browser.md).
///
/// A program of its own rather than a `haul` subcommand: it links no argument parser and no Foundation, so that it
/// starts in a few milliseconds, and it ignores its arguments (the browsers pass different ones). It never writes
/// to standard error: browsers log what a host prints there, and a message may hold cookies.
@main
enum BrowserHost {
    /// How long one message may take, the bus connection included: a hung bus must not hold the browser's answer.
    static let messageDeadline: Duration = .milliseconds(1800)

    static func main() async {
        // A browser that closes the pipe first must end the host with a failed write, not with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let reader = NativeMessageReader(descriptor: STDIN_FILENO)
        let writer = NativeMessageWriter(descriptor: STDOUT_FILENO)
        let handOff = HaulHandOff(application: BrowserApplication.ofParent())
        while true {
            switch reader.next() {
            case .end:
                return
            case .truncated:
                _ = writer.write(HostAnswer.failed(HostAnswer.HostError.truncated, "the message ended early").json)
                return
            case .oversized(let length):
                let limit = NativeMessageReader.maximumBytes
                let message = "a message of \(length) bytes is over the host's limit of \(limit)"
                // The rest of the input cannot be framed any more.
                _ = writer.write(HostAnswer.failed(HostAnswer.HostError.oversized, message).json)
                return
            case .message(let json):
                let message: HostMessage
                do {
                    message = try HostMessage(json: json)
                } catch {
                    let reason = "the message is not one of Haul's: \(error.reason)"
                    guard writer.write(HostAnswer.failed(HostAnswer.HostError.malformed, reason).json) else { return }
                    continue
                }
                guard let answer = await within(messageDeadline, { await handOff.perform(message) }) else {
                    // The call is stuck in libdbus and cannot be cancelled: answer, and leave it behind.
                    let timeout = "hauld did not answer within \(messageDeadline)"
                    _ = writer.write(HostAnswer.failed(HostAnswer.HostError.timeout, timeout).json)
                    return
                }
                guard writer.write(answer.json) else { return }
            }
        }
    }

    /// `work`'s answer, or nil once `deadline` has passed without one.
    private static func within(
        _ deadline: Duration, _ work: @escaping @Sendable () async -> HostAnswer
    ) async -> HostAnswer? {
        var timer: Task<Void, Never>?
        let answer: HostAnswer? = await withCheckedContinuation { continuation in
            let first = FirstAnswer(continuation)
            timer = Task {
                try? await Task.sleep(for: deadline)
                first.give(nil)
            }
            Task { first.give(await work()) }
        }
        timer?.cancel()
        return answer
    }
}

/// Resumes a continuation once, with whichever answer comes first.
private final class FirstAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<HostAnswer?, Never>?>

    init(_ continuation: CheckedContinuation<HostAnswer?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ answer: HostAnswer?) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: answer)
    }
}
