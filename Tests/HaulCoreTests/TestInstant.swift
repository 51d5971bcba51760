import HaulCore

/// A manual instant for driving ``ActivityIndicatorStateMachine``: an offset from an arbitrary origin, so tests read
/// as timelines (`ms(1000)`) and never depend on the real clock.
struct TestInstant: InstantProtocol, CustomStringConvertible {
    var offset: Duration

    init(_ offset: Duration) {
        self.offset = offset
    }

    func advanced(by duration: Duration) -> TestInstant {
        TestInstant(offset + duration)
    }

    func duration(to other: TestInstant) -> Duration {
        other.offset - offset
    }

    static func < (lhs: TestInstant, rhs: TestInstant) -> Bool {
        lhs.offset < rhs.offset
    }

    var description: String { "t+\(offset)" }
}

typealias Machine = ActivityIndicatorStateMachine<TestInstant>

/// The instant `milliseconds` after the origin.
func ms(_ milliseconds: Int) -> TestInstant {
    TestInstant(.milliseconds(milliseconds))
}

/// What the machine says when the indicator appears: entering active from delaying-start.
let showing: [Machine.Action] = [.publishState(.active), .setVisible(true)]

/// What the machine says when the indicator disappears without a timer to cancel: entering not-active.
let hiding: [Machine.Action] = [.publishState(.notActive), .setVisible(false)]
