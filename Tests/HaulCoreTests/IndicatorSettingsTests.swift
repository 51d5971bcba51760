import Foundation
import HaulCore
import Testing

@Suite("Indicator settings", .timeLimit(.minutes(2)))
struct IndicatorSettingsTests {
    @Test func defaultsAreTheDaemons() {
        let settings = IndicatorSettings()
        #expect(settings.enabled)
        #expect(settings.activationDelay == 1.0)
        #expect(settings.completionDelay == 0.17)
        #expect(settings.activationDuration == .seconds(1))
        #expect(settings.completionDuration == .milliseconds(170))
    }

    static let rejected: [(Double, IndicatorSettings.InvalidDelay.Reason)] = [
        (-1, .negative), (-0.000_001, .negative), (-.infinity, .notFinite), (.infinity, .notFinite),
        (.nan, .notFinite), (.signalingNaN, .notFinite), (60.000_001, .tooLong), (1e300, .tooLong),
        (.greatestFiniteMagnitude, .tooLong),
    ]

    @Test(arguments: rejected)
    func invalidDelaysAreRejected(_ seconds: Double, reason: IndicatorSettings.InvalidDelay.Reason) {
        #expect(!IndicatorSettings.isValidDelay(seconds))
        #expect(throws: IndicatorSettings.InvalidDelay(name: "ActivationDelay", value: seconds, reason: reason)) {
            try IndicatorSettings.validatedDelay(seconds, name: "ActivationDelay")
        }
    }

    static let accepted: [(Double, Duration)] = [
        (0, .zero), (-0.0, .zero), (0.17, .milliseconds(170)), (1, .seconds(1)), (0.000_000_001, .nanoseconds(1)),
        (59.999, .milliseconds(59_999)), (60, .seconds(60)),
    ]

    @Test(arguments: accepted)
    func validDelaysAreAcceptedAndConverted(_ seconds: Double, expected: Duration) throws {
        #expect(IndicatorSettings.isValidDelay(seconds))
        #expect(try IndicatorSettings.validatedDelay(seconds, name: "CompletionDelay") == expected)
    }

    @Test func errorMessageNamesTheSettingTheValueAndTheRange() {
        let error = IndicatorSettings.InvalidDelay(name: "ActivationDelay", value: -2.5, reason: .negative)
        #expect(error.description == "ActivationDelay must be a number of seconds from 0 to 60; -2.5 is negative")
        let nan = IndicatorSettings.InvalidDelay(name: "CompletionDelay", value: .nan, reason: .notFinite)
        #expect(
            nan.description == "CompletionDelay must be a number of seconds from 0 to 60; nan is not a finite number"
        )
        #expect(nan == nan, "NaN errors compare equal, so they can be matched")
    }

    @Test func validateNamesTheFirstInvalidField() {
        #expect(throws: Never.self) { try IndicatorSettings().validate() }
        var settings = IndicatorSettings()
        settings.completionDelay = 61
        #expect(throws: IndicatorSettings.InvalidDelay(name: "completionDelay", value: 61, reason: .tooLong)) {
            try settings.validate()
        }
        settings.activationDelay = -1
        #expect(throws: IndicatorSettings.InvalidDelay(name: "activationDelay", value: -1, reason: .negative)) {
            try settings.validate()
        }
    }

    @Test func durationsOfInvalidSettingsAreClampedInsteadOfTrapping() {
        let settings = IndicatorSettings(enabled: true, activationDelay: .nan, completionDelay: 1e12)
        #expect(settings.activationDuration == .zero)
        #expect(settings.completionDuration == .seconds(60))
        #expect(IndicatorSettings(activationDelay: -3).activationDuration == .zero)
        #expect(IndicatorSettings(activationDelay: -.infinity).activationDuration == .zero)
    }

    @Test func jsonRoundTrip() throws {
        let settings = IndicatorSettings(enabled: false, activationDelay: 0.25, completionDelay: 2)
        let decoded = try JSONDecoder().decode(IndicatorSettings.self, from: JSONEncoder().encode(settings))
        #expect(decoded == settings)
    }

    @Test func missingFieldsTakeTheirDefaultsAndUnknownOnesAreIgnored() throws {
        let empty = try JSONDecoder().decode(IndicatorSettings.self, from: Data("{}".utf8))
        #expect(empty == IndicatorSettings())
        let partial = try JSONDecoder().decode(
            IndicatorSettings.self,
            from: Data(#"{"completionDelay": 0.5, "futureSetting": [1, 2]}"#.utf8)
        )
        #expect(partial == IndicatorSettings(completionDelay: 0.5))
    }

    @Test func wrongTypesFailToDecode() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(IndicatorSettings.self, from: Data(#"{"enabled": "yes"}"#.utf8))
        }
    }
}
