import Foundation
import HaulCore
import Testing

@Suite("Retry policy", .timeLimit(.minutes(2)))
struct RetryPolicyTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110.
    let rfcExample = Date(timeIntervalSince1970: 784_111_777)

    @Test func theDefaultBackOffDoublesFromOneSecondUpToAMinute() {
        let policy = RetryPolicy()
        let delays = (1...9).map { policy.delay(afterAttempt: $0, retryAfter: nil) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { .seconds($0) })
    }

    @Test func extremeAttemptsStayInRange() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 0, retryAfter: nil) == .seconds(1))
        #expect(policy.delay(afterAttempt: -3, retryAfter: nil) == .seconds(1))
        #expect(policy.delay(afterAttempt: .max, retryAfter: nil) == .seconds(60))
    }

    @Test func aCustomPolicy() {
        let policy = RetryPolicy(initialDelay: .milliseconds(500), multiplier: 3, maximumDelay: .seconds(10))
        let delays = (1...5).map { policy.delay(afterAttempt: $0, retryAfter: nil) }
        #expect(delays == [.milliseconds(500), .milliseconds(1500), .milliseconds(4500), .seconds(10), .seconds(10)])
    }

    @Test func strangeFieldsNeitherTrapNorGoNegative() {
        let nan = RetryPolicy(multiplier: .nan)
        #expect(nan.delay(afterAttempt: 2, retryAfter: nil) == .seconds(60))
        let negative = RetryPolicy(initialDelay: .seconds(-5), multiplier: -2, maximumDelay: .seconds(-1))
        #expect(negative.delay(afterAttempt: 3, retryAfter: nil) == .zero)
        let huge = RetryPolicy(multiplier: .infinity)
        #expect(huge.delay(afterAttempt: 2, retryAfter: nil) == .seconds(60))
    }

    @Test func retryAfterIsAFloorCappedAtAnHour() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(30)) == .seconds(30))
        #expect(
            policy.delay(afterAttempt: 3, retryAfter: .milliseconds(500)) == .seconds(4),
            "never sooner than back-off"
        )
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(7200)) == .seconds(3600))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(-10)) == .seconds(1))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .zero) == .seconds(1))
    }

    @Test func retryAfterDeltaSeconds() {
        #expect(RetryPolicy.parseRetryAfter("120", now: rfcExample) == .seconds(120))
        #expect(RetryPolicy.parseRetryAfter(" 5 ", now: rfcExample) == .seconds(5))
        #expect(RetryPolicy.parseRetryAfter("0", now: rfcExample) == .zero)
        #expect(RetryPolicy.parseRetryAfter("007", now: rfcExample) == .seconds(7))
    }

    @Test func retryAfterHTTPDates() {
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now: rfcExample) == .seconds(30))
        #expect(RetryPolicy.parseRetryAfter("Sunday, 06-Nov-94 08:50:37 GMT", now: rfcExample) == .seconds(60))
        #expect(RetryPolicy.parseRetryAfter("Sun Nov  6 08:51:37 1994", now: rfcExample) == .seconds(120))
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: rfcExample) == .zero)
        #expect(RetryPolicy.parseRetryAfter("Sat, 05 Nov 1994 08:49:37 GMT", now: rfcExample) == .zero, "past: no wait")
    }

    @Test func anRFC850YearIsPlacedAtMostFiftyYearsAhead() {
        let now = Date(timeIntervalSince1970: 1_795_305_600)  // 2026-11-22 00:00:00 UTC
        // 2070 is 44 years ahead: kept. 2080 would be 54: 1980, in the past.
        #expect(RetryPolicy.parseRetryAfter("Wednesday, 01-Jan-70 00:00:00 GMT", now: now) == .seconds(3_155_760_000 - 1_795_305_600))
        #expect(RetryPolicy.parseRetryAfter("Tuesday, 01-Jan-80 00:00:00 GMT", now: now) == .zero)
    }

    @Test func httpDatesKnowTheLengthOfMonths() {
        let now = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01 00:00:00 UTC
        #expect(RetryPolicy.parseRetryAfter("Thu, 29 Feb 2024 00:00:00 GMT", now: now) == .seconds(59 * 86_400))
        #expect(RetryPolicy.parseRetryAfter("Fri, 01 Mar 2024 00:00:00 GMT", now: now) == .seconds(60 * 86_400))
        #expect(RetryPolicy.parseRetryAfter("Thu, 29 Feb 2023 00:00:00 GMT", now: now) == nil)
        #expect(RetryPolicy.parseRetryAfter("Tue, 31 Apr 2024 00:00:00 GMT", now: now) == nil)
    }

    @Test(arguments: [
        "", "   ", "soon", "-5", "+5", "1.5", "12 s", "0x10", "99999999999999999999999",
        "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT", "06 Nov 1994", "Sun, 06 Nov 1994",
        "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:49 GMT", "Sun Nov  6 08:49:37 94", "Sunday, 06-Nov-1994 08:49:37 GMT",
    ])
    func retryAfterGarbageIsNil(_ value: String) {
        #expect(RetryPolicy.parseRetryAfter(value, now: rfcExample) == nil)
    }
}
