/// `manager.json`: `{"defaultConnections": 1, "downloadRateLimit": 0, "uploadRateLimit": 0}`; a missing key takes the
/// default, and a rate limit of 0 and `"maxRunningTasks": 5` are not written (files stay as hauld wrote them before
/// limits and the queue existed).
extension ManagerSettings: Codable {
    enum CodingKeys: String, CodingKey {
        case defaultConnections = "defaultConnections"
        case downloadRateLimit = "downloadRateLimit"
        case uploadRateLimit = "uploadRateLimit"
        case maxRunningTasks = "maxRunningTasks"
        case inhibitSleep = "inhibitSleep"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        defaultConnections = try container.decodeIfPresent(UInt32.self, forKey: .defaultConnections) ?? 1
        guard DownloadOptions.connectionRange.contains(defaultConnections) else {
            throw DecodingError.dataCorruptedError(
                forKey: .defaultConnections, in: container, debugDescription: "must be between 1 and 16"
            )
        }
        for (key, limit) in [(CodingKeys.downloadRateLimit, \Self.downloadRateLimit), (.uploadRateLimit, \.uploadRateLimit)] {
            self[keyPath: limit] = try container.decodeIfPresent(UInt64.self, forKey: key) ?? 0
            guard RateLimitRule.isValid(self[keyPath: limit]) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be \(RateLimitRule.requirement)"
                )
            }
        }
        maxRunningTasks = try container.decodeIfPresent(UInt32.self, forKey: .maxRunningTasks) ?? Self().maxRunningTasks
        inhibitSleep = try container.decodeIfPresent(Bool.self, forKey: .inhibitSleep) ?? false
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(defaultConnections, forKey: .defaultConnections)
        if downloadRateLimit != 0 { try container.encode(downloadRateLimit, forKey: .downloadRateLimit) }
        if uploadRateLimit != 0 { try container.encode(uploadRateLimit, forKey: .uploadRateLimit) }
        if maxRunningTasks != Self().maxRunningTasks {
            try container.encode(maxRunningTasks, forKey: .maxRunningTasks)
        }
        if inhibitSleep { try container.encode(inhibitSleep, forKey: .inhibitSleep) }
    }
}
