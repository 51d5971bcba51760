import Foundation
import HaulCore
import Testing

/// `indicator.json` and `manager.json` as hauld writes them: the first two files were written by hauld on
/// 2026-11-24 (main at 27f833e) after `haul indicator --disable --activation-delay 0.5 --completion-delay 0.25` and
/// `DefaultConnections` set to 3; the defaults as the stores encoded them then.
@Suite("Settings file format", .timeLimit(.minutes(2)))
struct SettingsFileFormatTests {
    static let indicator = #"""
        {
          "activationDelay" : 0.5,
          "completionDelay" : 0.25,
          "enabled" : false
        }
        """#
    static let defaultIndicator = #"""
        {
          "activationDelay" : 1,
          "completionDelay" : 0.17,
          "enabled" : true
        }
        """#
    static let manager = #"""
        {
          "defaultConnections" : 3
        }
        """#
    static let defaultManager = #"""
        {
          "defaultConnections" : 1
        }
        """#

    @Test(arguments: [
        (indicator, IndicatorSettings(enabled: false, activationDelay: 0.5, completionDelay: 0.25)),
        (defaultIndicator, IndicatorSettings()),
    ])
    func indicatorSettingsLoadAndSaveTheSameFile(_ golden: (String, IndicatorSettings)) throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "indicator.json")
            try Data(golden.0.utf8).write(to: url)
            let store = IndicatorSettingsStore(url: url)
            #expect(store.load() == .init(settings: golden.1))
            try FileManager.default.removeItem(at: url)
            try store.save(golden.1)
            #expect(try String(contentsOf: url, encoding: .utf8) == golden.0)
        }
    }

    @Test(arguments: [(manager, UInt32(3)), (defaultManager, UInt32(1))])
    func managerSettingsLoadAndSaveTheSameFile(_ golden: (String, UInt32)) throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "manager.json")
            try Data(golden.0.utf8).write(to: url)
            let loaded = ManagerSettings.load(from: url)
            #expect(loaded.problem == nil)
            #expect(loaded.settings.defaultConnections == golden.1)
            try FileManager.default.removeItem(at: url)
            try loaded.settings.save(to: url)
            #expect(try String(contentsOf: url, encoding: .utf8) == golden.0)
        }
    }

    /// Files of other versions may lack keys: each takes its default.
    @Test func missingKeysTakeTheirDefaults() throws {
        try withTemporaryDirectory { directory in
            let indicator = directory.appending(path: "indicator.json")
            try Data(#"{"completionDelay": 2}"#.utf8).write(to: indicator)
            #expect(IndicatorSettingsStore(url: indicator).load() == .init(settings: .init(completionDelay: 2)))
            let manager = directory.appending(path: "manager.json")
            try Data("{}".utf8).write(to: manager)
            let loaded = ManagerSettings.load(from: manager)
            #expect(loaded.problem == nil && loaded.settings == ManagerSettings())
        }
    }
}
