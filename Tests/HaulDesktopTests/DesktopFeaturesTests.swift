import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct DesktopFeaturesTests {
    typealias Features = DesktopFeatures

    /// Every panel, and notifications for the transfers no KDE job shows.
    @Test func defaultsAreEveryPanel() {
        let resolved = Features.resolve(noJobView: false, noStatusNotifier: false, notify: false, environment: [:])
        #expect(resolved.features == Features(jobViews: true, statusNotifier: true, notifications: .unlessShownAsJob))
        #expect(resolved.problems.isEmpty)
        let auto = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: ["HAULD_NOTIFY": "auto"]
        )
        #expect(auto.features.notifications == .unlessShownAsJob)
        #expect(auto.problems.isEmpty)
    }

    @Test func flagsWinOverTheEnvironment() {
        let environment = ["HAULD_JOB_VIEW": "1", "HAULD_STATUS_NOTIFIER": "yes", "HAULD_NOTIFY": "0"]
        let resolved = Features.resolve(noJobView: true, noStatusNotifier: true, notify: true, environment: environment)
        #expect(resolved.features == Features(jobViews: false, statusNotifier: false, notifications: .always))
        let quiet = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, noNotify: true, environment: ["HAULD_NOTIFY": "1"]
        )
        #expect(quiet.features.notifications == .off)
        #expect(quiet.features.isEmpty == false)
    }

    @Test func theEnvironmentChangesTheDefaults() {
        let environment = ["HAULD_JOB_VIEW": "off", "HAULD_STATUS_NOTIFIER": "0", "HAULD_NOTIFY": "TRUE"]
        let resolved = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: environment
        )
        #expect(resolved.features == Features(jobViews: false, statusNotifier: false, notifications: .always))
        #expect(resolved.features.isEmpty == false)
        let none = Features.resolve(
            noJobView: true, noStatusNotifier: true, notify: false, environment: ["HAULD_NOTIFY": "off"]
        )
        #expect(none.features.isEmpty)
    }

    @Test func aBadValueIsReportedAndIgnored() {
        let resolved = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: ["HAULD_STATUS_NOTIFIER": "maybe"]
        )
        #expect(resolved.features.statusNotifier)
        #expect(resolved.problems.count == 1 && resolved.problems[0].contains("HAULD_STATUS_NOTIFIER=maybe"))
        let notify = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: ["HAULD_NOTIFY": "sometimes"]
        )
        #expect(notify.features.notifications == .unlessShownAsJob)
        #expect(notify.problems.count == 1 && notify.problems[0].hasSuffix("(true/false, yes/no, on/off) or auto"))
    }
}
