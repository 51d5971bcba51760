/// `indicator.json`: `{"enabled": true, "activationDelay": 1, "completionDelay": 0.17}`, delays in seconds.
extension IndicatorSettings: Codable {
    /// The keys of the file, which also name a delay in ``InvalidDelay``.
    enum CodingKeys: String, CodingKey {
        case enabled = "enabled"
        case activationDelay = "activationDelay"
        case completionDelay = "completionDelay"
    }

    /// Decodes settings, taking the default for any missing field so that files written by other versions still load.
    /// Values are not validated here: see ``validate()``.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            enabled: try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? Self.defaultEnabled,
            activationDelay:
                try container.decodeIfPresent(Double.self, forKey: .activationDelay) ?? Self.defaultActivationDelay,
            completionDelay:
                try container.decodeIfPresent(Double.self, forKey: .completionDelay) ?? Self.defaultCompletionDelay
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(activationDelay, forKey: .activationDelay)
        try container.encode(completionDelay, forKey: .completionDelay)
    }
}
