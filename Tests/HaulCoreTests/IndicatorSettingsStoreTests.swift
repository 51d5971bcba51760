import Foundation
import HaulCore
import Testing

@Suite("Indicator settings store", .timeLimit(.minutes(2)))
struct IndicatorSettingsStoreTests {
    @Test func missingFileGivesTheDefaultsSilently() throws {
        try withTemporaryDirectory { directory in
            let store = IndicatorSettingsStore(url: directory.appending(path: "indicator.json"))
            #expect(store.load() == .init(settings: IndicatorSettings(), problem: nil))
            let deeper = IndicatorSettingsStore(url: directory.appending(path: "no/such/dir/indicator.json"))
            #expect(deeper.load() == .init(settings: IndicatorSettings(), problem: nil))
        }
    }

    @Test func saveThenLoadRoundTrips() throws {
        try withTemporaryDirectory { directory in
            let store = IndicatorSettingsStore(url: directory.appending(path: "haul/indicator.json"))
            let settings = IndicatorSettings(enabled: false, activationDelay: 0, completionDelay: 60)
            try store.save(settings)
            #expect(store.load() == .init(settings: settings))
            try store.save(IndicatorSettings(activationDelay: 2))
            #expect(store.load().settings == IndicatorSettings(activationDelay: 2))
            #expect(try entries(of: directory.appending(path: "haul")) == ["indicator.json"])
        }
    }

    @Test func savedFileIsReadableJSON() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try IndicatorSettingsStore(url: url).save(IndicatorSettings())
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(text.contains(#""activationDelay" : 1"#))
            #expect(text.contains(#""completionDelay" : 0.17"#))
            #expect(text.contains(#""enabled" : true"#))
        }
    }

    @Test func invalidSettingsAreNotSaved() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            let store = IndicatorSettingsStore(url: url)
            #expect(throws: IndicatorSettings.InvalidDelay.self) {
                try store.save(IndicatorSettings(completionDelay: .nan))
            }
            let remaining = try entries(of: directory)
            #expect(remaining == [], "nothing is written")
        }
    }

    @Test(arguments: ["", "not json", "[1, 2]", #"{"enabled": 1}"#, #"{"activationDelay": "1s"}"#, "{\"enabled\": tr"])
    func corruptFileGivesTheDefaultsAndAProblem(_ contents: String) throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try Data(contents.utf8).write(to: url)
            let result = IndicatorSettingsStore(url: url).load()
            #expect(result.settings == IndicatorSettings())
            guard case .corrupt(let path, _)? = result.problem else {
                Issue.record("expected a corrupt-file problem, got \(String(describing: result.problem))")
                return
            }
            #expect(path == url.path(percentEncoded: false))
            #expect(result.problem?.description.hasPrefix("corrupt indicator settings \(path): ") == true)
        }
    }

    @Test func outOfRangeValuesGiveTheDefaultsAndTheValidationError() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try Data(#"{"enabled": false, "activationDelay": -1}"#.utf8).write(to: url)
            let result = IndicatorSettingsStore(url: url).load()
            #expect(result.settings == IndicatorSettings(), "nothing of an invalid file is used, not even enabled")
            #expect(
                result.problem == .invalid(
                    path: url.path(percentEncoded: false),
                    IndicatorSettings.InvalidDelay(name: "activationDelay", value: -1, reason: .negative)
                )
            )
        }
    }

    @Test func unreadableFileGivesTheDefaultsAndAProblem() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            let result = IndicatorSettingsStore(url: url).load()
            #expect(result.settings == IndicatorSettings())
            guard case .unreadable? = result.problem else {
                Issue.record("expected an unreadable-file problem, got \(String(describing: result.problem))")
                return
            }
        }
    }

    @Test func aSaveRepairsACorruptFile() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try Data("garbage".utf8).write(to: url)
            let store = IndicatorSettingsStore(url: url)
            #expect(store.load().problem != nil)
            try store.save(IndicatorSettings(completionDelay: 0.5))
            #expect(store.load() == .init(settings: IndicatorSettings(completionDelay: 0.5)))
        }
    }
}
