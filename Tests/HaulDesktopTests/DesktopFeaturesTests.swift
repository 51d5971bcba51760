import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct DesktopFeaturesTests {
    typealias Features = DesktopFeatures

    @Test func defaultsAreJobViewsAndTrayIconWithoutNotifications() {
        let resolved = Features.resolve(noJobView: false, noStatusNotifier: false, notify: false, environment: [:])
        #expect(resolved.features == Features(jobViews: true, statusNotifier: true, notifications: false))
        #expect(resolved.problems.isEmpty)
    }

    @Test func flagsWinOverTheEnvironment() {
        let environment = ["HAULD_JOB_VIEW": "1", "HAULD_STATUS_NOTIFIER": "yes", "HAULD_NOTIFY": "0"]
        let resolved = Features.resolve(noJobView: true, noStatusNotifier: true, notify: true, environment: environment)
        #expect(resolved.features == Features(jobViews: false, statusNotifier: false, notifications: true))
    }

    @Test func theEnvironmentChangesTheDefaults() {
        let environment = ["HAULD_JOB_VIEW": "off", "HAULD_STATUS_NOTIFIER": "0", "HAULD_NOTIFY": "TRUE"]
        let resolved = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: environment
        )
        #expect(resolved.features == Features(jobViews: false, statusNotifier: false, notifications: true))
        #expect(resolved.features.isEmpty == false)
    }

    @Test func aBadValueIsReportedAndIgnored() {
        let resolved = Features.resolve(
            noJobView: false, noStatusNotifier: false, notify: false, environment: ["HAULD_STATUS_NOTIFIER": "maybe"]
        )
        #expect(resolved.features.statusNotifier)
        #expect(resolved.problems.count == 1 && resolved.problems[0].contains("HAULD_STATUS_NOTIFIER=maybe"))
    }
}
