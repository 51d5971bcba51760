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

    /// The rate limits are written only when set (files of hauld before limits stay as they were), and read back.
    @Test func rateLimitsAreKeptWhenSet() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending(path: "manager.json")
            var settings = ManagerSettings()
            settings.downloadRateLimit = 5 << 20
            settings.uploadRateLimit = 4096
            try settings.save(to: url)
            #expect(try String(contentsOf: url, encoding: .utf8) == """
                {
                  "defaultConnections" : 1,
                  "downloadRateLimit" : 5242880,
                  "uploadRateLimit" : 4096
                }
                """)
            #expect(ManagerSettings.load(from: url).settings == settings)
            try Data(#"{"uploadRateLimit": 1}"#.utf8).write(to: url)
            let refused = ManagerSettings.load(from: url)
            #expect(refused.settings == ManagerSettings() && refused.problem != nil)
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

    /// What is not a regular file of a settings file's size is reported, not read, as for task records: a link would
    /// be followed anywhere, a huge file would take hauld's memory, and a FIFO is no file.
    @Test(arguments: ["link", "huge", "fifo"])
    func onlyRegularFilesOfASettingsFilesSizeAreRead(_ kind: String) throws {
        try withTemporaryDirectory { directory in
            let path = { (name: String) in directory.appending(path: name).path(percentEncoded: false) }
            for name in ["manager.json", "indicator.json"] {
                switch kind {
                case "link":
                    // Settings other than the defaults, elsewhere.
                    let settings = name == "manager.json" ? Self.manager : Self.indicator
                    try Data(settings.utf8).write(to: directory.appending(path: "elsewhere-\(name)"))
                    #expect(symlink(path("elsewhere-\(name)"), path(name)) == 0)
                case "huge":
                    #expect(FileManager.default.createFile(atPath: path(name), contents: nil))
                    #expect(truncate(path(name), off_t(RegularFile.largestSettings + 1)) == 0)
                default:
                    #expect(mkfifo(path(name), 0o600) == 0)
                }
            }
            let manager = ManagerSettings.load(from: directory.appending(path: "manager.json"))
            #expect(manager.settings == ManagerSettings())
            #expect(manager.problem?.hasPrefix("cannot read manager settings: ") == true, "\(manager.problem ?? "")")
            #expect(manager.problem?.contains(path("manager.json")) == true)
            let indicator = IndicatorSettingsStore(url: directory.appending(path: "indicator.json")).load()
            #expect(indicator.settings == IndicatorSettings())
            guard case .unreadable(let reported, _)? = indicator.problem else {
                Issue.record("expected an unreadable problem, got \(String(describing: indicator.problem))")
                return
            }
            #expect(reported == path("indicator.json"))
        }
    }
}
