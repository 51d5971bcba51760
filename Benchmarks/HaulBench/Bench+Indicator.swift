import DBusKit
import HaulContract
import HaulTestSupport

/// The delayed activity indicator's timing: from a manual hold to `VisibilityChanged(true)`, and from its release
/// to `VisibilityChanged(false)`, against the configured delays.
extension Bench {
    static let activationDelay = 0.5
    static let completionDelay = 0.17

    func indicatorAccuracy() async throws -> IndicatorFigures {
        try await client.calls.set(.activationDelay, to: .double(Self.activationDelay))
        try await client.calls.set(.completionDelay, to: .double(Self.completionDelay))
        var activation: [Double] = []
        var completion: [Double] = []
        for _ in 0..<settings.indicatorRepetitions {
            let held = ContinuousClock.now
            try await client.calls.call(.incrementActivityCount)
            let shown = try await visibility(true, after: held)
            activation.append(held.duration(to: shown).milliseconds - Self.activationDelay * 1000)

            let released = ContinuousClock.now
            try await client.calls.call(.decrementActivityCount)
            let hidden = try await visibility(false, after: released)
            completion.append(released.duration(to: hidden).milliseconds - Self.completionDelay * 1000)
            try await Task.sleep(for: .milliseconds(50))
        }
        return IndicatorFigures(
            activationDelaySeconds: Self.activationDelay, completionDelaySeconds: Self.completionDelay,
            activationError: Latencies(activation), completionError: Latencies(completion)
        )
    }

    /// When `VisibilityChanged(visible)` arrived (the bench's clock), waiting up to five seconds.
    private func visibility(_ visible: Bool, after instant: ContinuousClock.Instant) async throws
        -> ContinuousClock.Instant
    {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let signal = client.signals.visibility(visible, after: instant) { return signal.instant }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw TestSupportError("VisibilityChanged(\(visible)) did not come")
    }
}
